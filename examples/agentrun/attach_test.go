package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/internal/fakecli"
)

// TestAttachFlag: each -attach FILE goes with the prompt (the fake
// claude's stdin message holds the image's bytes and the text file's),
// and a file agentcli refuses fails before the CLI starts, saying why.
func TestAttachFlag(t *testing.T) {
	cli, dir := fake(t, okScript...)
	files := t.TempDir()
	img := filepath.Join(files, "-shot,1 2.gif")
	txt := filepath.Join(files, "log.txt")
	bmp := filepath.Join(files, "x.bmp")
	for p, data := range map[string]string{img: "GIF89a-pixels", txt: "FAIL: TestX\n", bmp: "BM\x00\xff"} {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errOut := runArgs(t, "", "-cli", cli, "-attach", img, "-attach", txt, "what failed?")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	rec, err := fakecli.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	// GIF89a-pixels in base64, and the text as a document.
	for _, want := range []string{`"media_type":"image/gif","data":"R0lGODlhLXBpeGVscw=="`, `"title":"log.txt"`, `FAIL: TestX\n`} {
		if !strings.Contains(rec.Stdin, want) {
			t.Errorf("stdin %q lacks %q", rec.Stdin, want)
		}
	}
	for _, a := range rec.Args {
		if strings.Contains(a, "shot") || strings.Contains(a, "log.txt") {
			t.Errorf("a file name reached argv: %q", a)
		}
	}
	os.Remove(filepath.Join(dir, "record.json"))
	code, _, errOut = runArgs(t, "", "-cli", cli, "-attach", bmp, "what is it?")
	if code != 1 || !strings.Contains(errOut, "not supported") {
		t.Errorf("a BMP: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "record.json")); err == nil {
		t.Error("the CLI started for a refused attachment")
	}
}
