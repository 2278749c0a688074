package driver_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/driver"
)

func TestStartError(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX scripts and modes")
	}
	dir := t.TempDir()
	noInterp := filepath.Join(dir, "script")
	if err := os.WriteFile(noInterp, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExec := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExec, []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		want       error
	}{
		{"missing file", filepath.Join(dir, "missing"), agentcli.ErrNotFound},
		{"missing interpreter", noInterp, agentcli.ErrNotExecutable},
		{"not executable", notExec, agentcli.ErrNotExecutable},
	} {
		t.Run(c.name, func(t *testing.T) {
			startErr := exec.Command(c.path).Start()
			if startErr == nil {
				t.Fatalf("%s started", c.path)
			}
			err := driver.StartError("fake", c.path, startErr)
			var be *agentcli.BinaryError
			if !errors.As(err, &be) {
				t.Fatalf("StartError = %T %v, want *agentcli.BinaryError", err, err)
			}
			if !errors.Is(err, c.want) || be.Backend != "fake" || be.Path != c.path || !errors.Is(be.Cause, startErr) {
				t.Errorf("StartError = %+v, want Err %v, Backend fake, Path %s, Cause %v", be, c.want, c.path, startErr)
			}
		})
	}
}
