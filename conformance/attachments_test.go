//go:build unix

package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// attachCLIs are the CLIs that take attachments (images and text files),
// slowest first; attachRefused those that refuse them.
var (
	attachCLIs    = []string{"copilot", "opencode", "gemini", "claude", "codex"}
	attachRefused = []string{"qwen", "droid"}
)

// webp1x1 is a lossless 1×1 WebP image (no encoder in the standard
// library).
var webp1x1, _ = base64.StdEncoding.DecodeString("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")

// attachText is the text file: several lines, non-ASCII, characters a
// shell or a prompt parser would read ($, `, @, /), a trailing newline.
const attachText = "ATTACH-TEXT-4d2e line one\n/help @README.md $HOME `x` é😀\n  indented: want 3, got 4\n"

// testImage draws a w×h image with a pattern and encodes it.
func testImage(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.White, color.Black, color.RGBA{200, 30, 30, 255}, color.RGBA{30, 30, 200, 255}})
	for y := range h {
		for x := range w {
			img.SetColorIndex(x, y, uint8((x/3+y/2)%4))
		}
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// attachFixture is the set of attachments every scenario sends: a PNG
// given by a path a CLI would misread (a leading dash, commas, spaces, a
// newline), a JPEG, GIF and WebP as bytes, and a text file by path.
type attachFixture struct {
	atts []agentcli.Attachment
	// data is each attachment's bytes, in order; kind its media type.
	data  [][]byte
	types []string
}

func newAttachFixture(t testing.TB) attachFixture {
	t.Helper()
	dir := t.TempDir()
	pngData := testImage(t, "png", 32, 20)
	pngPath := filepath.Join(dir, "-image,a b\nc.png")
	if err := os.WriteFile(pngPath, pngData, 0o600); err != nil {
		t.Fatal(err)
	}
	textPath := filepath.Join(dir, "--notes,1 2.txt")
	if err := os.WriteFile(textPath, []byte(attachText), 0o600); err != nil {
		t.Fatal(err)
	}
	jpg, gf := testImage(t, "jpeg", 24, 16), testImage(t, "gif", 20, 10)
	return attachFixture{
		atts: []agentcli.Attachment{
			{Path: pngPath},
			{Data: jpg, Name: "photo.jpg"},
			{Data: gf, MediaType: "image/gif"},
			{Data: webp1x1, MediaType: "image/png"}, // declared wrong: the bytes decide
			{Path: textPath, Name: "notes.txt"},
		},
		data:  [][]byte{pngData, jpg, gf, webp1x1, []byte(attachText)},
		types: []string{"image/png", "image/jpeg", "image/gif", "image/webp", "text/plain"},
	}
}

// takes reports whether a backend with the attachment capabilities caps
// takes an attachment of media type typ; the types of the refusal cases
// ("image/x-not-taken": a GIF or WebP, which only a backend that does not
// take all image formats refuses) are taken by those that do.
func takes(caps []agentcli.AttachmentKind, typ string) bool {
	switch {
	case typ == "image/x-not-taken":
		return !slices.Contains(caps, agentcli.AttachmentImage)
	case strings.HasPrefix(typ, "image/"):
		return slices.Contains(caps, agentcli.AttachmentImage) || slices.Contains(caps, agentcli.AttachmentKind(typ))
	}
	return slices.Contains(caps, agentcli.AttachmentText)
}

// only returns f without the attachments a backend with capabilities
// caps does not take.
func (f attachFixture) only(caps []agentcli.AttachmentKind) attachFixture {
	var g attachFixture
	for i, a := range f.atts {
		if takes(caps, f.types[i]) {
			g.atts = append(g.atts, a)
			g.data = append(g.data, f.data[i])
			g.types = append(g.types, f.types[i])
		}
	}
	return g
}

// checkAttachments checks that every attachment of f reached one model
// request of reqs: each image byte for byte (codex: a GIF as a PNG of the
// same size), the text verbatim, its "@README.md" not read as a file.
func checkAttachments(t *testing.T, cli string, f attachFixture, reqs []agentclitest.ModelRequest) {
	t.Helper()
	var parts []agentclitest.InputPart
	var texts []string
	for _, r := range reqs {
		if bytes.Contains(r.Body, []byte(readmeMarker)) {
			t.Errorf("a model request carries README.md: the CLI read the attached text's @README.md as a file reference")
		}
		parts = append(parts, r.InputParts()...)
		for _, m := range r.Messages {
			texts = append(texts, m.Text)
		}
	}
	for i, want := range f.data {
		typ := f.types[i]
		if typ == "text/plain" {
			found := slices.ContainsFunc(parts, func(p agentclitest.InputPart) bool {
				return p.Kind == "document" && bytes.Equal(p.Data, want)
			}) || slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, string(want)) })
			if !found {
				t.Errorf("the text file did not reach the model verbatim; texts: %s", shorten(strings.Join(texts, "|")))
			}
			continue
		}
		sum := sha256.Sum256(want)
		found := slices.ContainsFunc(parts, func(p agentclitest.InputPart) bool {
			return p.Kind == "image" && sha256.Sum256(p.Data) == sum && p.MediaType == typ
		})
		if !found && cli == "codex" && typ == "image/gif" {
			// codex converts every GIF to PNG (documented): the same
			// picture, decoded.
			found = slices.ContainsFunc(parts, func(p agentclitest.InputPart) bool {
				cfg, format, err := image.DecodeConfig(bytes.NewReader(p.Data))
				return err == nil && format == "png" && p.MediaType == "image/png" && cfg.Width == 20 && cfg.Height == 10
			})
		}
		if !found {
			var got []string
			for _, p := range parts {
				got = append(got, fmt.Sprintf("%s %s %d bytes sha %x", p.Kind, p.MediaType, len(p.Data), sha256.Sum256(p.Data)))
			}
			t.Errorf("attachment %d (%s, %d bytes, sha %x) did not reach the model unchanged; parts: %v", i, typ, len(want), sum, got)
		}
	}
}

// TestAttachments: on each CLI that takes attachments, a one-shot run and
// a live turn carry a PNG, a JPEG, a GIF, a WebP and a text file to the
// model request (checkAttachments); hostile paths never reach a command
// line as options; an attachment agentcli refuses (a BMP, one too large)
// fails before any process starts or model request is made. On the CLIs
// that take none, attachments are an *agentcli.UnsupportedError with no
// process and no model request.
func TestAttachments(t *testing.T) {
	for _, cli := range attachCLIs {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			b := openBackend(t, cli, nil)
			caps := b.Capabilities().Attachments
			if !takes(caps, "image/png") || !takes(caps, "text/plain") {
				t.Fatalf("Capabilities().Attachments = %v, want PNG images and text at least", caps)
			}
			t.Run("oneshot", func(t *testing.T) {
				f := newAttachFixture(t).only(caps)
				e := newEnv(t, cli, agentclitest.Turn{Text: "seen"})
				req, tag := e.request("Describe the attached files.")
				req.Attachments = f.atts
				res, _, err := run(t, b, req, tag)
				if err != nil {
					t.Fatalf("Run: %s; requests %s", errSummary(err), describe(e.srv.Requests()))
				}
				if res.Text != "seen" {
					t.Errorf("Result.Text = %q", res.Text)
				}
				checkAttachments(t, cli, f, e.main())
			})
			t.Run("live", func(t *testing.T) {
				f := newAttachFixture(t).only(caps)
				e := newEnv(t, cli, agentclitest.Turn{Text: "first"}, agentclitest.Turn{Text: "seen"})
				req, tag := e.liveRequest()
				s := liveSession(t, b, req, tag)
				if _, err := s.Run(context.Background(), "A turn without attachments."); err != nil {
					t.Fatalf("turn 1: %s", errSummary(err))
				}
				n := len(e.main())
				res, err := agentcli.RunTurn(context.Background(), s, &agentcli.Turn{Prompt: "Describe the attached files.", Attachments: f.atts})
				if err != nil {
					t.Fatalf("turn 2: %s; requests %s", errSummary(err), describe(e.srv.Requests()))
				}
				if res.Text != "seen" {
					t.Errorf("Result.Text = %q", res.Text)
				}
				checkAttachments(t, cli, f, e.main()[n:])
				// A refused attachment fails the turn before anything is
				// sent; the session goes on.
				before := len(e.srv.Requests())
				_, err = agentcli.RunTurn(context.Background(), s, &agentcli.Turn{Prompt: "x", Attachments: []agentcli.Attachment{{Data: []byte("BM\x00\x00binary")}}})
				var ue *agentcli.UnsupportedError
				if !errors.As(err, &ue) {
					t.Errorf("a binary attachment: %s, want an *agentcli.UnsupportedError", errSummary(err))
				}
				if got := len(e.srv.Requests()); got != before {
					t.Errorf("a refused turn made %d model requests", got-before)
				}
				if s.Err() != nil {
					t.Errorf("the session ended: %v", s.Err())
				}
			})
			t.Run("refused", func(t *testing.T) {
				e := newEnv(t, cli, agentclitest.Turn{Text: "never"})
				big := make([]byte, agentcli.MaxImageBytes+1)
				copy(big, testImage(t, "png", 2, 2))
				for _, c := range []struct {
					name string
					att  agentcli.Attachment
					want error
				}{
					// An image format the backend does not take.
					{"gif", agentcli.Attachment{Data: testImage(t, "gif", 2, 2), MediaType: "image/x-not-taken"}, agentcli.ErrUnsupported},
					{"webp", agentcli.Attachment{Data: webp1x1, MediaType: "image/x-not-taken"}, agentcli.ErrUnsupported},
					{"bmp", agentcli.Attachment{Data: []byte("BM6\x00\x00\x00\x00\x00\x00\x006\x00"), MediaType: "image/bmp"}, agentcli.ErrUnsupported},
					{"pdf", agentcli.Attachment{Data: []byte("%PDF-1.4\n"), MediaType: "application/pdf"}, agentcli.ErrUnsupported},
					{"big-image", agentcli.Attachment{Data: big}, agentcli.ErrBadRequest},
					{"big-text", agentcli.Attachment{Data: bytes.Repeat([]byte("a"), agentcli.MaxTextBytes+1)}, agentcli.ErrBadRequest},
					{"missing", agentcli.Attachment{Path: filepath.Join(t.TempDir(), "-nope,x.png")}, agentcli.ErrBadRequest},
					{"dir", agentcli.Attachment{Path: t.TempDir()}, agentcli.ErrBadRequest},
				} {
					if c.att.MediaType == "image/x-not-taken" && !takes(caps, c.att.MediaType) {
						continue // the backend takes every image format
					}
					req, tag := e.request("x")
					req.Attachments = []agentcli.Attachment{c.att}
					_, _, err := run(t, b, req, tag)
					if !errors.Is(err, c.want) {
						t.Errorf("%s: %s, want %v", c.name, errSummary(err), c.want)
					}
				}
				if n := len(e.srv.Requests()); n != 0 {
					t.Errorf("refused attachments made %d model requests", n)
				}
			})
		})
	}
	for _, cli := range attachRefused {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			b := openBackend(t, cli, nil)
			if got := b.Capabilities().Attachments; len(got) != 0 {
				t.Fatalf("Capabilities().Attachments = %v; this suite expects none", got)
			}
			e := newEnv(t, cli, agentclitest.Turn{Text: "never"})
			req, tag := e.request("x")
			req.Attachments = []agentcli.Attachment{{Data: testImage(t, "png", 2, 2)}}
			_, _, err := run(t, b, req, tag)
			var ue *agentcli.UnsupportedError
			if !errors.As(err, &ue) {
				t.Errorf("Run with an attachment: %s, want an *agentcli.UnsupportedError", errSummary(err))
			}
			lreq, ltag := e.liveRequest()
			s := liveSession(t, b, lreq, ltag)
			_, err = agentcli.RunTurn(context.Background(), s, &agentcli.Turn{Prompt: "x", Attachments: req.Attachments})
			if !errors.As(err, &ue) {
				t.Errorf("a live turn with an attachment: %s, want an *agentcli.UnsupportedError", errSummary(err))
			}
			if n := len(e.srv.Requests()); n != 0 {
				t.Errorf("refused attachments made %d model requests", n)
			}
		})
	}
}
