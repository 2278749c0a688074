package codex

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

// TestImageArgs: each image becomes --image=PATH of agentcli's own,
// holding the image's bytes, before `resume -- ID` and the final "-"; a
// text file is not an option but follows the prompt.
func TestImageArgs(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nrest")
	atts := []agentcli.Attachment{
		{Name: "-x,y.png", MediaType: "image/png", Data: png},
		{Name: "n.txt", MediaType: "text/plain", Data: []byte("T")},
		{Name: "--model=evil", MediaType: "image/gif", Data: []byte("GIF89a")},
	}
	for _, id := range []string{"", "0199a213-81c0-7800-8aa1-bbab2a035a53"} {
		r := &driver.Run{}
		req := &agentcli.Request{Prompt: "p", SessionID: id, Attachments: atts}
		base := buildArgsFiles(req, "/w", runFiles{})
		args, err := imageArgs(r, base, atts, id != "")
		if err != nil {
			t.Fatal(err)
		}
		var images []string
		for _, a := range args {
			if p, ok := strings.CutPrefix(a, "--image="); ok {
				images = append(images, p)
			}
			if strings.Contains(a, "-x,y") || strings.Contains(a, "evil") || strings.Contains(a, "n.txt") {
				t.Errorf("a caller's name reached argv: %q", a)
			}
		}
		if len(images) != 2 {
			t.Fatalf("args %q: want 2 --image options", args)
		}
		for i, p := range images {
			if strings.ContainsAny(p, ", ") || !strings.HasSuffix(p, []string{".png", ".gif"}[i]) {
				t.Errorf("image path %q", p)
			}
			data, err := os.ReadFile(p)
			if err != nil || string(data) != string(atts[i*2].Data) {
				t.Errorf("image %d: %q, %v", i, data, err)
			}
		}
		tail := []string{"-"}
		if id != "" {
			tail = []string{"resume", "--", id, "-"}
		}
		if !slices.Equal(args[len(args)-len(tail):], tail) {
			t.Errorf("args end %q, want %q", args, tail)
		}
		if !slices.Equal(slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "--image=") }), base) {
			t.Errorf("args %q are not %q with images added", args, base)
		}
		// The run's end removes the copies.
		r.Cleanup()
		for _, p := range images {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s left after the run: %v", p, err)
			}
		}
	}
}

// TestTurnInput: turn/start carries the prompt, then a data URL per
// image and a framed text item per text file, in order.
func TestTurnInput(t *testing.T) {
	in := turnInput("p", []agentcli.Attachment{
		{Name: "a.txt", MediaType: "text/plain", Data: []byte("T\n")},
		{Name: "i", MediaType: "image/webp", Data: []byte("RIFF")},
	})
	if len(in) != 3 || in[0]["text"] != "p" || in[1]["type"] != "text" || in[2]["url"] != "data:image/webp;base64,UklGRg==" {
		t.Fatalf("input %v", in)
	}
	if s := in[1]["text"].(string); !strings.Contains(s, "a.txt") || !strings.Contains(s, "\nT\n") {
		t.Errorf("text item %q", s)
	}
}
