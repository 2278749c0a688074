package driver

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
	"testing"
)

func TestRewriteDir(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"cwd":"/a/b"}`, `{"cwd":"/x/y z"}`},
		{`cd /a/b/src && ls /a/b`, `cd /x/y z/src && ls /x/y z`},
		{`/a/bc /a/b.go /a/b-1 /a/b_ /a/bé`, `/a/bc /a/b.go /a/b-1 /a/b_ /a/bé`},
		{`"<cwd>/a/b</cwd>"`, `"<cwd>/x/y z</cwd>"`},
		{`nothing`, `nothing`},
	} {
		if got := string(RewriteDir([]byte(c.in), "/a/b", "/x/y z")); got != c.want {
			t.Errorf("RewriteDir(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// The JSON-escaped form: a directory with a quote in its name.
	old, nw := `/a/"q"`, `/n`
	jo, _ := json.Marshal(map[string]string{"cwd": old})
	if got := string(RewriteDir(jo, old, nw)); got != `{"cwd":"/n"}` {
		t.Errorf("escaped: %s", got)
	}
}

// archive builds a session archive of entries (name, content) in order.
func archive(t *testing.T, entries ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e[0], Mode: 0o600, Size: int64(len(e[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e[1]))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// TestReadSessionArchive: an archive from another machine is checked
// before anything is written: its manifest, its names (nothing that
// leaves the root), its size.
func TestReadSessionArchive(t *testing.T) {
	manifest := `{"format":"agentcli-session","version":1,"backend":"b","session_id":"s","dir":"/old"}`
	m, files, err := readSessionArchive(archive(t, [2]string{sessionManifestName, manifest}, [2]string{"files/a/b.jsonl", "x"}))
	if err != nil || m.SessionID != "s" || len(files) != 1 || files[0].Name != "a/b.jsonl" {
		t.Fatalf("good archive: %+v %+v %v", m, files, err)
	}
	for name, a := range map[string][]byte{
		"not gzip":       []byte("plain"),
		"no manifest":    archive(t, [2]string{"files/a", "x"}),
		"manifest later": archive(t, [2]string{"files/a", "x"}, [2]string{sessionManifestName, manifest}),
		"other format":   archive(t, [2]string{sessionManifestName, `{"format":"zip","version":1,"session_id":"s","dir":"/o"}`}),
		"future version": archive(t, [2]string{sessionManifestName, strings.Replace(manifest, `"version":1`, `"version":9`, 1)}),
		"relative dir":   archive(t, [2]string{sessionManifestName, strings.Replace(manifest, `"/old"`, `"old"`, 1)}),
		"dot dot":        archive(t, [2]string{sessionManifestName, manifest}, [2]string{"files/../x", "x"}),
		"absolute":       archive(t, [2]string{sessionManifestName, manifest}, [2]string{"files//etc/x", "x"}),
		"unclean":        archive(t, [2]string{sessionManifestName, manifest}, [2]string{"files/a/../../x", "x"}),
		"stray entry":    archive(t, [2]string{sessionManifestName, manifest}, [2]string{"other", "x"}),
		"backslash":      archive(t, [2]string{sessionManifestName, manifest}, [2]string{`files/a\..\x`, "x"}),
	} {
		if _, _, err := readSessionArchive(a); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A symbolic link is no regular file.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: sessionManifestName, Mode: 0o600, Size: int64(len(manifest)), Typeflag: tar.TypeReg})
	tw.Write([]byte(manifest))
	tw.WriteHeader(&tar.Header{Name: "files/l", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink})
	tw.Close()
	zw.Close()
	if _, _, err := readSessionArchive(buf.Bytes()); err == nil {
		t.Error("a symbolic link was accepted")
	}
}

// TestReadSessionArchiveBound: an archive whose files claim more than
// MaxSessionArchive is refused before it is read.
func TestReadSessionArchiveBound(t *testing.T) {
	manifest := `{"format":"agentcli-session","version":1,"backend":"b","session_id":"s","dir":"/old"}`
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: sessionManifestName, Mode: 0o600, Size: int64(len(manifest)), Typeflag: tar.TypeReg})
	tw.Write([]byte(manifest))
	tw.WriteHeader(&tar.Header{Name: "files/huge", Mode: 0o600, Size: MaxSessionArchive + 1, Typeflag: tar.TypeReg})
	tw.Write(make([]byte, 1024)) // the rest never comes
	tw.Flush()
	zw.Close()
	_, _, err := readSessionArchive(buf.Bytes())
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("err = %v, want the size bound", err)
	}
}
