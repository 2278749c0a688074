package backendtest

import (
	"net"
	"os"
	"testing"
)

// TestRunIsolated: the test body runs where only loopback is up, and
// loopback works (a listener on 127.0.0.1 accepts a connection). Outside a
// namespace it runs through a copy of the test binary; inside one (scripts/
// test.sh) it runs here.
func TestRunIsolated(t *testing.T) {
	if RunIsolated(t) {
		return
	}
	up, err := externalInterfaces()
	if err != nil || len(up) != 0 {
		t.Fatalf("interfaces up: %v (%v)", up, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	t.Logf("isolated (child: %v)", os.Getenv(envIsolated) != "")
}

// TestRunIsolatedSubtest: subtest names with spaces and regexp characters
// select exactly themselves in the copy.
func TestRunIsolatedSubtest(t *testing.T) {
	for _, name := range []string{"a b (c)", "x.*y"} {
		t.Run(name, func(t *testing.T) {
			if RunIsolated(t) {
				return
			}
			if up, _ := externalInterfaces(); len(up) != 0 {
				t.Fatalf("interfaces up: %v", up)
			}
		})
	}
}

func TestTestPattern(t *testing.T) {
	for name, want := range map[string]string{
		"TestX":                "^TestX$",
		"TestX/a_b_(c)":        `^TestX$/^a_b_\(c\)$`,
		"TestX/x.*y/deeper#01": `^TestX$/^x\.\*y$/^deeper#01$`,
	} {
		if got := testPattern(name); got != want {
			t.Errorf("testPattern(%q) = %q, want %q", name, got, want)
		}
	}
}
