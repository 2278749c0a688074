package driver_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

var (
	pngHead  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpegHead = []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F'}
	gifHead  = []byte("GIF89a\x01\x00\x01\x00")
	webpHead = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L")
	both     = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}
)

// TestLoadAttachmentsKinds: the bytes decide an attachment's kind and
// type; a declared type is corrected among images, and anything that is
// neither an image agentcli takes nor UTF-8 text is unsupported.
func TestLoadAttachmentsKinds(t *testing.T) {
	for _, c := range []struct {
		name     string
		att      agentcli.Attachment
		wantType string // "" when an error is wanted
		wantErr  error
	}{
		{"png", agentcli.Attachment{Data: pngHead}, "image/png", nil},
		{"jpeg", agentcli.Attachment{Data: jpegHead}, "image/jpeg", nil},
		{"gif", agentcli.Attachment{Data: gifHead}, "image/gif", nil},
		{"gif87", agentcli.Attachment{Data: []byte("GIF87a....")}, "image/gif", nil},
		{"webp", agentcli.Attachment{Data: webpHead}, "image/webp", nil},
		{"png declared jpeg", agentcli.Attachment{Data: pngHead, MediaType: "image/jpeg"}, "image/png", nil},
		{"png declared text", agentcli.Attachment{Data: pngHead, MediaType: "text/plain"}, "image/png", nil},
		{"text", agentcli.Attachment{Data: []byte("hello\n")}, "text/plain", nil},
		{"markdown", agentcli.Attachment{Data: []byte("# hi"), MediaType: "text/markdown; charset=UTF-8"}, "text/markdown", nil},
		{"text declared png", agentcli.Attachment{Data: []byte("hello"), MediaType: "image/png"}, "", agentcli.ErrBadRequest},
		{"bmp", agentcli.Attachment{Data: []byte("BM6\x00\x00\x00"), MediaType: "image/bmp"}, "", agentcli.ErrUnsupported},
		{"bmp undeclared", agentcli.Attachment{Data: []byte("BM6\x00\x00\x00\xff\xfe")}, "", agentcli.ErrUnsupported},
		{"pdf", agentcli.Attachment{Data: []byte("%PDF-1.4"), MediaType: "application/pdf"}, "", agentcli.ErrUnsupported},
		{"nul", agentcli.Attachment{Data: []byte("a\x00b")}, "", agentcli.ErrUnsupported},
		{"latin1", agentcli.Attachment{Data: []byte("caf\xe9")}, "", agentcli.ErrUnsupported},
		{"charset", agentcli.Attachment{Data: []byte("cafe"), MediaType: "text/plain; charset=iso-8859-1"}, "", agentcli.ErrUnsupported},
		{"bad media type", agentcli.Attachment{Data: []byte("x"), MediaType: "text/"}, "", agentcli.ErrBadRequest},
		{"empty", agentcli.Attachment{Data: []byte{}}, "", agentcli.ErrBadRequest},
		{"neither", agentcli.Attachment{Name: "x"}, "", agentcli.ErrBadRequest},
		{"both", agentcli.Attachment{Data: []byte("x"), Path: "/etc/hostname"}, "", agentcli.ErrBadRequest},
		{"name newline", agentcli.Attachment{Data: []byte("x"), Name: "a\nb"}, "", agentcli.ErrBadRequest},
		{"name long", agentcli.Attachment{Data: []byte("x"), Name: strings.Repeat("n", 256)}, "", agentcli.ErrBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := driver.LoadAttachments("b", both, []agentcli.Attachment{c.att})
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].MediaType != c.wantType || !bytes.Equal(got[0].Data, c.att.Data) || got[0].Path != "" {
				t.Fatalf("got %+v, want type %s and the same bytes", got, c.wantType)
			}
		})
	}
}

// TestLoadAttachmentsErrorTypes: the errors are the typed ones, naming
// the backend and the attachment.
func TestLoadAttachmentsErrorTypes(t *testing.T) {
	_, err := driver.LoadAttachments("b", both, []agentcli.Attachment{{Data: pngHead}, {Data: []byte("x"), MediaType: "image/png"}})
	var re *agentcli.RequestError
	if !errors.As(err, &re) || re.Backend != "b" || re.Field != "Attachments[1]" {
		t.Errorf("err = %#v, want a *RequestError for Attachments[1]", err)
	}
	_, err = driver.LoadAttachments("b", []agentcli.AttachmentKind{agentcli.AttachmentImage}, []agentcli.Attachment{{Data: []byte("text")}})
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || ue.Backend != "b" || !strings.Contains(ue.Feature, "text") {
		t.Errorf("a text file where only images go: %#v, want an *UnsupportedError", err)
	}
	pngOnly := []agentcli.AttachmentKind{"image/png"}
	if _, err := driver.LoadAttachments("b", pngOnly, []agentcli.Attachment{{Data: pngHead}}); err != nil {
		t.Errorf("a PNG where PNG goes: %v", err)
	}
	if _, err := driver.LoadAttachments("b", pngOnly, []agentcli.Attachment{{Data: gifHead}}); !errors.As(err, &ue) {
		t.Errorf("a GIF where only PNG goes: %v, want an *UnsupportedError", err)
	}
	_, err = driver.LoadAttachments("b", nil, []agentcli.Attachment{{Data: pngHead}})
	if !errors.As(err, &ue) {
		t.Errorf("a backend without attachments: %#v, want an *UnsupportedError", err)
	}
	if got, err := driver.LoadAttachments("b", nil, nil); got != nil || err != nil {
		t.Errorf("no attachments: %v, %v", got, err)
	}
}

// TestLoadAttachmentsLimits: each limit holds at its value and refuses a
// byte more.
func TestLoadAttachmentsLimits(t *testing.T) {
	img := func(n int) []byte {
		b := make([]byte, n)
		copy(b, pngHead)
		return b
	}
	text := func(n int) []byte { return bytes.Repeat([]byte("a"), n) }
	for _, c := range []struct {
		name string
		atts []agentcli.Attachment
		ok   bool
	}{
		{"image at limit", []agentcli.Attachment{{Data: img(agentcli.MaxImageBytes)}}, true},
		{"image over", []agentcli.Attachment{{Data: img(agentcli.MaxImageBytes + 1)}}, false},
		{"text at limit", []agentcli.Attachment{{Data: text(agentcli.MaxTextBytes)}}, true},
		{"text over", []agentcli.Attachment{{Data: text(agentcli.MaxTextBytes + 1)}}, false},
		{"total at limit", []agentcli.Attachment{{Data: img(agentcli.MaxImageBytes)}, {Data: img(agentcli.MaxImageBytes)},
			{Data: img(agentcli.MaxImageBytes)}, {Data: img(agentcli.MaxImageBytes)}}, true},
		{"total over", []agentcli.Attachment{{Data: img(agentcli.MaxImageBytes)}, {Data: img(agentcli.MaxImageBytes)},
			{Data: img(agentcli.MaxImageBytes)}, {Data: img(agentcli.MaxImageBytes)}, {Data: text(1)}}, false},
	} {
		_, err := driver.LoadAttachments("b", both, c.atts)
		if c.ok && err != nil || !c.ok && !errors.Is(err, agentcli.ErrBadRequest) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestLoadAttachmentsPath: a path is read (its base name is the default
// Name, control characters replaced); what is not a regular file, or
// does not exist, is a *RequestError.
func TestLoadAttachmentsPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "-x,y z\nw.png")
	if err := os.WriteFile(p, pngHead, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := driver.LoadAttachments("b", both, []agentcli.Attachment{{Path: p}, {Data: []byte("t")}})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Name != "-x,y z_w.png" || !bytes.Equal(got[0].Data, pngHead) || got[0].Path != "" || got[0].MediaType != "image/png" {
		t.Errorf("got %+v", got[0])
	}
	if got[1].Name != "attachment-2" {
		t.Errorf("default name %q, want attachment-2", got[1].Name)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, agentcli.MaxImageBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{dir, filepath.Join(dir, "missing"), big} {
		if _, err := driver.LoadAttachments("b", both, []agentcli.Attachment{{Path: bad}}); !errors.Is(err, agentcli.ErrBadRequest) {
			t.Errorf("Path %q: %v, want a *RequestError", bad, err)
		}
	}
}

// TestInlineText: text files follow the prompt, framed, verbatim; images
// are left out.
func TestInlineText(t *testing.T) {
	atts := []agentcli.Attachment{{Name: "a.txt", MediaType: "text/plain", Data: []byte("one\ntwo\n")},
		{Name: "i.png", MediaType: "image/png", Data: pngHead}}
	got := driver.InlineText("prompt", atts)
	want := "prompt\n" + fmt.Sprintf(agentcli.TextAttachmentHeader, "a.txt") + "one\ntwo\n" + fmt.Sprintf(agentcli.TextAttachmentFooter, "a.txt")
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := driver.InlineText("p", atts[1:]); got != "p" {
		t.Errorf("images only: %q", got)
	}
}

// TestLoadAttachmentsDashPath: a relative path that looks like an option
// is a file name like any other.
func TestLoadAttachmentsDashPath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("-rf,x y.txt", []byte("dash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := driver.LoadAttachments("b", both, []agentcli.Attachment{{Path: "-rf,x y.txt"}})
	if err != nil || string(got[0].Data) != "dash\n" || got[0].Name != "-rf,x y.txt" {
		t.Fatalf("got %+v, %v", got, err)
	}
}
