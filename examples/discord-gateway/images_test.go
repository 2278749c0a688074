package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// testImages returns a real PNG, JPEG and GIF of a few pixels, and bytes
// that begin like a WebP image.
func testImages(t *testing.T) (pngData, jpegData, gifData, webpData []byte) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var p, j, g bytes.Buffer
	if err := png.Encode(&p, img); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&j, img, nil); err != nil {
		t.Fatal(err)
	}
	pal := image.NewPaletted(img.Bounds(), []color.Color{color.Black, color.White})
	if err := gif.Encode(&g, pal, nil); err != nil {
		t.Fatal(err)
	}
	payload := []byte("VP8 \x04\x00\x00\x00abcd")
	w := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(payload)))...)
	w = append(append(w, "WEBP"...), payload...)
	return p.Bytes(), j.Bytes(), g.Bytes(), w
}

// attachmentSender sends messages with files through the fake Discord.
type attachmentSender struct {
	p *program
	f *fakeDiscord
}

func (s attachmentSender) send(channel, text string, files ...map[string]any) string {
	id := nextSnowflake()
	m := message(id, channel, "alice", text)
	m["attachments"] = files
	s.f.dispatch("MESSAGE_CREATE", m)
	return id
}

// file is a Discord attachment served by the fake CDN under a unique
// path; size is what Discord announces (-1: the real size).
func (s attachmentSender) file(name, ct string, data []byte, size int) map[string]any {
	if size < 0 {
		size = len(data)
	}
	id := nextSnowflake()
	return map[string]any{"id": id, "filename": name, "content_type": ct, "size": size,
		"url": s.f.file(id+"/"+name, data)}
}

// TestProgramImages: images pasted in Discord reach the agent byte for
// byte as agentcli.Attachments — on a warm live session (the default: the
// gateway's wrapper forwards agentcli.StreamTurn), a live session of the
// conversation's own and one CLI process per message
// (Request.Attachments) — with text files still inlined into the prompt,
// a message of images alone given a prompt, and every retry of a failed
// turn carrying the same images.
func TestProgramImages(t *testing.T) {
	pngData, jpegData, gifData, webpData := testImages(t)
	crash := &agentcli.ExitError{Backend: "fake", Code: 1, Stderr: "Error: boom"}
	for _, mode := range []string{"warm", "live", "oneshot"} {
		t.Run(mode, func(t *testing.T) {
			f := newFakeDiscord(t)
			agent := newFakeAgent()
			agent.attach = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}
			attempts := faults(agent, map[string][]error{"retry this picture": {crash}})
			var b agentcli.Backend = agent
			env := []string{"THREADS=false"}
			switch mode {
			case "live":
				env = append(env, "WARM_SESSIONS=0")
			case "oneshot":
				b = noSessions{agent}
			}
			p := startProgram(t, f, b, "", env...)
			s := attachmentSender{p, f}

			note := "the build log says: undefined: Foo"
			got := p.answer(s.send("c1", "what is wrong here?",
				s.file("screen shot.png", "image/png", pngData, -1),
				s.file("photo.jpg", "image/jpeg", jpegData, -1),
				s.file("message.txt", "text/plain; charset=utf-8", []byte(note), -1)))
			if !strings.Contains(got, "what is wrong here?") || !strings.Contains(got, note) {
				t.Errorf("the answer %q; want the prompt with the text file inlined", got)
			}
			p.answer(s.send("c1", "", s.file("anim.gif", "", gifData, -1), s.file("x.webp", "image/webp", webpData, -1)))
			p.answer(s.send("c1", "retry this picture", s.file("again.png", "image/png", pngData, -1)))

			want := []struct {
				prompt string
				names  []string
				types  []string
				data   [][]byte
			}{
				{"what is wrong here?", []string{"screen shot.png", "photo.jpg"}, []string{"image/png", "image/jpeg"}, [][]byte{pngData, jpegData}},
				{"(see the attached images)", []string{"anim.gif", "x.webp"}, []string{"image/gif", "image/webp"}, [][]byte{gifData, webpData}},
				{"retry this picture", []string{"again.png"}, []string{"image/png"}, [][]byte{pngData}},
				{"retry this picture", []string{"again.png"}, []string{"image/png"}, [][]byte{pngData}}, // the retry
			}
			turns := agent.attachedCopy()
			if len(turns) != len(want) {
				t.Fatalf("%d turns with attachments; want %d", len(turns), len(want))
			}
			for i, w := range want {
				tr := turns[i]
				if tr.live != (mode != "oneshot") {
					t.Errorf("turn %d: live %v in mode %s", i, tr.live, mode)
				}
				if b := body(tr.prompt); !strings.HasPrefix(b, w.prompt) {
					t.Errorf("turn %d: prompt %q; want it to begin %q", i, b, w.prompt)
				}
				if len(tr.atts) != len(w.data) {
					t.Errorf("turn %d: %d attachments; want %d", i, len(tr.atts), len(w.data))
					continue
				}
				for j, a := range tr.atts {
					if a.Name != w.names[j] || a.MediaType != w.types[j] || a.Path != "" || !bytes.Equal(a.Data, w.data[j]) {
						t.Errorf("turn %d attachment %d: %q %q, %d bytes; want %q %q, %d bytes as sent",
							i, j, a.Name, a.MediaType, len(a.Data), w.names[j], w.types[j], len(w.data[j]))
					}
				}
			}
			if n := attempts()["retry this picture"]; n != 2 {
				t.Errorf("%d attempts at the crashed turn; want 2", n)
			}
			starts := agent.startsCopy()
			switch {
			case mode == "oneshot" && len(starts) != 0:
				t.Errorf("%d sessions started on a backend without them", len(starts))
			case mode != "oneshot" && len(starts) == 0:
				t.Errorf("no live session started")
			}
		})
	}
}

// TestProgramImageRefusals: an image the backend cannot take, or over a
// limit, or that is no image, is refused with a reply that names the file
// (and the limit); the message, text included, is not run.
func TestProgramImageRefusals(t *testing.T) {
	pngData, _, gifData, _ := testImages(t)
	big := append(append([]byte(nil), pngData...), bytes.Repeat([]byte{0}, 3000)...)
	huge := append(append([]byte(nil), pngData...), make([]byte, 4<<20)...)

	t.Run("capabilities", func(t *testing.T) {
		f := newFakeDiscord(t)
		agent := newFakeAgent() // lists no attachments
		p := startProgram(t, f, agent, "", "THREADS=false")
		s := attachmentSender{p, f}
		got := p.answer(s.send("c1", "look at this", s.file("shot.png", "image/png", pngData, -1)))
		if !strings.Contains(got, "`shot.png` — the fake agent cannot take images") || !strings.Contains(got, "send the message again without images") {
			t.Errorf("refusal %q", got)
		}
		if n := f.downloadCount(); n != 0 {
			t.Errorf("%d downloads of an image that is refused anyway", n)
		}
		agent.mu.Lock()
		agent.attach = []agentcli.AttachmentKind{"image/png", agentcli.AttachmentText}
		agent.mu.Unlock()
		got = p.answer(s.send("c1", "and this", s.file("anim.gif", "image/gif", gifData, -1)))
		if !strings.Contains(got, "`anim.gif` — the fake agent cannot take gif images") {
			t.Errorf("a GIF on a backend that takes PNG only: %q", got)
		}
		p.answer(s.send("c1", "png only", s.file("ok.png", "image/png", pngData, -1)))
		if turns := agent.attachedCopy(); len(turns) != 1 || !bytes.Equal(turns[0].atts[0].Data, pngData) {
			t.Errorf("%d turns with attachments; want the PNG only", len(turns))
		}
		agent.mu.Lock()
		defer agent.mu.Unlock()
		if agent.turns != 1 {
			t.Errorf("%d turns; the refused messages must not run", agent.turns)
		}
	})

	t.Run("limits", func(t *testing.T) {
		f := newFakeDiscord(t)
		agent := newFakeAgent()
		agent.attach = []agentcli.AttachmentKind{agentcli.AttachmentImage}
		p := startProgram(t, f, agent, "", "THREADS=false", "IMAGE_MAX_BYTES=2000")
		s := attachmentSender{p, f}
		five := make([]map[string]any, 5) // 5 × 4 MiB > agentcli.MaxAttachmentBytes
		for i := range five {
			five[i] = s.file(fmt.Sprintf("p%d.png", i), "image/png", huge, -1)
		}
		for _, tt := range []struct {
			name  string
			files []map[string]any
			env   string
			want  string
		}{
			{"announced", []map[string]any{s.file("big.png", "image/png", big, -1)}, "",
				"`big.png` is too large: at most 2,000 bytes per image (IMAGE_MAX_BYTES)"},
			{"understated", []map[string]any{s.file("liar.png", "image/png", big, 10)}, "",
				"`liar.png` is too large: at most 2,000 bytes"},
			{"not an image", []map[string]any{s.file("fake.png", "image/png", []byte("just text, really"), -1)}, "",
				"`fake.png` is not a PNG, JPEG, GIF or WebP image"},
			{"bmp", []map[string]any{s.file("old.bmp", "image/bmp", []byte("BM...."), -1)}, "",
				"only pass on text files and images (PNG, JPEG, GIF, WebP): `old.bmp`"},
		} {
			if got := p.answer(s.send("c1", "see "+tt.name, tt.files...)); !strings.Contains(got, tt.want) {
				t.Errorf("%s: %q; want %q", tt.name, got, tt.want)
			}
		}
		p.stop()

		// The limit on all the images of one message.
		p = startProgram(t, f, agent, "", "THREADS=false")
		s.p = p
		before := f.downloadCount()
		got := p.answer(s.send("c1", "five big ones", five...))
		if want := "The images of this message are too large together: at most 20,971,520 bytes (20 MiB) per message"; !strings.Contains(got, want) {
			t.Errorf("five images of 4 MiB: %q; want %q", got, want)
		}
		if n := f.downloadCount() - before; n > 4 {
			t.Errorf("%d downloads; the fifth image is refused by its announced size", n)
		}
		agent.mu.Lock()
		defer agent.mu.Unlock()
		if agent.turns != 0 || len(agent.atts) != 0 {
			t.Errorf("%d turns; the refused messages must not run", agent.turns)
		}
	})
}

// TestProgramPoolImages: with NATS_URL the pool carries images to its
// workers: a small one and one too large for a NATS message reach the
// worker's agent byte-exact, with the message's text; a text file,
// inlined into the prompt, still goes.
func TestProgramPoolImages(t *testing.T) {
	pngData, _, _, _ := testImages(t)
	large := append(append([]byte(nil), pngData...), bytes.Repeat([]byte{7}, 3<<20)...)
	url := startNATS(t)
	agent := newFakeAgent()
	agent.attach = []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}
	startPoolWorker(t, url, agent, "w1")
	local := newFakeAgent()
	local.attach = agent.attach // the pool reports the backend's kinds
	f := newFakeDiscord(t)
	p := startProgram(t, f, local, "", "NATS_URL="+url, "THREADS=false")
	s := attachmentSender{p, f}
	got := p.answer(s.send("c1", "what is this", s.file("shot.png", "image/png", pngData, -1),
		s.file("large.png", "image/png", large, -1)))
	if strings.Contains(got, "Not sent") {
		t.Fatalf("images with NATS_URL: %q", got)
	}
	got = p.answer(s.send("c1", "and this", s.file("notes.md", "text/markdown", []byte("# notes"), -1)))
	if !strings.Contains(got, "# notes") {
		t.Errorf("a text file with NATS_URL: %q", got)
	}
	turns := agent.attachedCopy()
	if len(turns) != 1 || len(turns[0].atts) != 2 || !strings.Contains(turns[0].prompt, "what is this") {
		t.Fatalf("the worker got %+v; want one turn with both images", turns)
	}
	for i, want := range [][]byte{pngData, large} {
		if a := turns[0].atts[i]; !bytes.Equal(a.Data, want) || a.MediaType != "image/png" || a.Path != "" {
			t.Errorf("image %d reached the worker as %s, %d bytes, path %q; want the %d bytes sent", i, a.MediaType, len(a.Data), a.Path, len(want))
		}
	}
	local.mu.Lock()
	defer local.mu.Unlock()
	if local.turns != 0 {
		t.Errorf("the gateway's own agent ran %d turns; the pool's workers run them", local.turns)
	}
}

// TestProgramImagesAfterRestart: a message that was still waiting when
// the gateway died keeps its attachments' Discord URLs in the journal
// (never their bytes); the restarted gateway downloads the images again
// when it answers it. One whose URL no longer serves the file (Discord's
// signed CDN URLs expire) is answered with a request to send it again.
func TestProgramImagesAfterRestart(t *testing.T) {
	pngData, _, _, _ := testImages(t)
	f := newFakeDiscord(t)
	agent := newFakeAgent()
	agent.attach = []agentcli.AttachmentKind{agentcli.AttachmentImage}
	state := t.TempDir()
	j, err := NewFileJournal(filepath.Join(state, "inflight"))
	if err != nil {
		t.Fatal(err)
	}
	kept := Message{ID: nextSnowflake(), Channel: "c1", Author: "alice", Text: "what is this", Seq: 1,
		Attachments: []Attachment{{Name: "shot.png", ContentType: "image/png", Size: len(pngData), URL: f.file("kept/shot.png", pngData)}}}
	gone := Message{ID: nextSnowflake(), Channel: "c2", Author: "alice", Text: "and this", Seq: 2,
		Attachments: []Attachment{{Name: "old.png", ContentType: "image/png", Size: len(pngData), URL: f.base + "/files/expired/old.png"}}}
	for _, m := range []Message{kept, gone} {
		if err := j.Queued(m); err != nil {
			t.Fatal(err)
		}
	}
	p := startProgram(t, f, agent, state, "THREADS=false")
	if got := p.answer(kept.ID); !strings.Contains(got, "echo: ") || !strings.Contains(got, "what is this") {
		t.Errorf("the message that waited: %q", got)
	}
	if got := p.answer(gone.ID); !strings.Contains(got, "Could not download `old.png`; please send it again") {
		t.Errorf("the message whose image is gone: %q", got)
	}
	turns := agent.attachedCopy()
	if len(turns) != 1 || len(turns[0].atts) != 1 || !bytes.Equal(turns[0].atts[0].Data, pngData) {
		t.Fatalf("%d turns with attachments; want the waiting message's image, downloaded again", len(turns))
	}
	waitFor(t, "the journal to empty", func() bool {
		entries, _ := os.ReadDir(filepath.Join(state, "inflight"))
		return len(entries) == 0
	})
}

// TestImageMemory: the images of the messages being answered hold at
// most imageMemory bytes: a message whose images could take more than is
// left waits before downloading them, and every message gives back what
// it held once answered (or refused).
func TestImageMemory(t *testing.T) {
	pngData, _, _, _ := testImages(t)
	agent := newFakeAgent()
	agent.attach = []agentcli.AttachmentKind{agentcli.AttachmentImage}
	var mu sync.Mutex
	fetched := 0
	fetch := func(ctx context.Context, a Attachment, limit int) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		fetched++
		if a.Name == "bad.png" {
			return []byte("not an image"), nil
		}
		return pngData, nil
	}
	h := newHarness(t, t.TempDir(), Options{Backend: agent, Fetch: fetch})
	defer h.close(t)
	img := func(name string) []Attachment {
		return []Attachment{{Name: name, ContentType: "image/png", Size: len(pngData), URL: "https://cdn/" + name}}
	}
	h.rt.Handle(Message{ID: "m1", Channel: "c1", Author: "u1", Text: "one", Attachments: img("a.png")})
	h.rt.Handle(Message{ID: "m2", Channel: "c2", Author: "u1", Text: "two", Attachments: img("bad.png")})
	h.answered(t, "m1")
	if got := h.answered(t, "m2"); !strings.Contains(got, "not a PNG") {
		t.Errorf("m2: %q", got)
	}
	waitFor(t, "the image memory to be given back", func() bool {
		if !h.rt.imageMem.TryAcquire(imageMemory) {
			return false
		}
		h.rt.imageMem.Release(imageMemory)
		return true
	})

	// All but 1 MiB held: an image of up to 5 MiB waits.
	if !h.rt.imageMem.TryAcquire(imageMemory - 1<<20) {
		t.Fatal("the image memory is not free")
	}
	h.rt.Handle(Message{ID: "m3", Channel: "c3", Author: "u1", Text: "three", Attachments: img("c.png")})
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	n := fetched
	mu.Unlock()
	if n != 2 {
		t.Errorf("%d downloads; m3's image must wait for memory", n)
	}
	h.rt.imageMem.Release(imageMemory - 1<<20)
	if got := h.answered(t, "m3"); !strings.Contains(got, "echo: ") {
		t.Errorf("m3: %q", got)
	}
	if turns := agent.attachedCopy(); len(turns) != 2 || !bytes.Equal(turns[1].atts[0].Data, pngData) {
		t.Errorf("%d turns with images; want m1's and m3's", len(turns))
	}
}

// TestProgramImagesRealCLI: an image pasted in Discord reaches the model
// request byte for byte through the program and the real claude CLI
// (-offline: the scripted model server), in the warm session the first
// message of a conversation takes. Run it in a network namespace (as
// scripts/test.sh does): nothing may leave loopback.
func TestProgramImagesRealCLI(t *testing.T) {
	requireCLI(t, "claude")
	pngData, _, _, _ := testImages(t)
	var srv *agentclitest.Server
	var smu sync.Mutex
	onOffline = func(s *agentclitest.Server) { smu.Lock(); srv = s; smu.Unlock() }
	defer func() { onOffline = nil }()
	f := newFakeDiscord(t)
	p := startProgramArgs(t, f, nil, "", []string{"-offline", "-offline-reply", "I see a tiny picture.", "-v"},
		"AGENT_BACKEND=claude", "BACKEND_CLI_PATH=", "THREADS=false", "QUERY_TIMEOUT=120")
	s := attachmentSender{p, f}
	got := p.answer(s.send("c1", "what is in this picture?", s.file("tiny.png", "image/png", pngData, -1)))
	if !strings.Contains(got, "I see a tiny picture.") {
		t.Fatalf("the answer: %q", got)
	}
	if !strings.Contains(p.log.String(), "a warm session for the conversation") {
		t.Errorf("the message did not run in a warm session")
	}
	smu.Lock()
	defer smu.Unlock()
	if srv == nil {
		t.Fatal("-offline did not start the scripted model server")
	}
	var images [][]byte
	for _, r := range srv.Requests() {
		if r.Utility {
			continue
		}
		for _, part := range r.InputParts() {
			if part.Kind == "image" {
				images = append(images, part.Data)
			}
		}
		var texts []string
		for _, m := range r.Messages {
			texts = append(texts, m.Text)
		}
		if joined := strings.Join(texts, "\n"); !strings.Contains(joined, "what is in this picture?") {
			t.Errorf("the model's request lacks the prompt: %q", joined)
		}
	}
	if len(images) != 1 || !bytes.Equal(images[0], pngData) {
		t.Fatalf("%d images reached the model; want the PNG byte for byte", len(images))
	}
}
