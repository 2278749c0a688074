package backendtest

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
)

// envIsolated is set in the environment of a test binary that RunIsolated
// started in a private network namespace.
const envIsolated = "AGENTCLI_TEST_ISOLATED"

// RunIsolated makes sure the calling test (or subtest) runs with no network
// interface up but loopback, so that nothing a real CLI does can leave the
// machine. Call it first, before starting a server or a CLI:
//
//	if backendtest.RunIsolated(t) {
//		return
//	}
//
// When the process already has only loopback up (for example inside
// `unshare -n`, as scripts/test.sh runs the suite as root), RunIsolated
// brings loopback up if needed and returns false: the test goes on here.
//
// Otherwise it runs this one test again in a copy of the test binary
// started in a new user and network namespace (the rootless equivalent of
// `unshare --user --map-root-user --net`), with loopback up and no other
// interface, waits for it, reports its outcome on t (its output is logged;
// a failure fails t) and returns true: the caller must return at once.
//
// When no namespace can be made (unprivileged user namespaces disabled,
// not Linux), the test is skipped, or fails under CI=true: a real-CLI test
// either runs isolated or fails loudly, never silently skips in CI.
func RunIsolated(t *testing.T) bool {
	t.Helper()
	if os.Getenv(envIsolated) != "" {
		if err := loopbackUp(); err != nil {
			t.Fatalf("isolated test binary: bringing loopback up: %v", err)
		}
	}
	up, err := externalInterfaces()
	if err != nil {
		SkipUnlessCI(t, "cannot list network interfaces: %v", err)
	}
	if len(up) == 0 {
		if err := loopbackUp(); err != nil {
			SkipUnlessCI(t, "only loopback exists but cannot be brought up: %v", err)
		}
		return false
	}
	if os.Getenv(envIsolated) != "" {
		t.Fatalf("isolated test binary still sees network interfaces %v", up)
	}
	out, err := runInNamespace(t, testPattern(t.Name()))
	if err == errNoNamespace {
		SkipUnlessCI(t, "network interfaces %v are up and no private network namespace can be made (%s); "+
			"run the real-CLI tests inside `unshare -n` (scripts/test.sh does) or allow unprivileged user namespaces", up, out)
	}
	switch {
	case err != nil:
		t.Fatalf("%s, run again in a private network namespace, failed: %v\n%s", t.Name(), err, out)
	case strings.Contains(out, "testing: warning: no tests to run"):
		t.Fatalf("%s: the isolated test binary found no test matching %s\n%s", t.Name(), testPattern(t.Name()), out)
	case strings.Contains(out, "--- SKIP: "+t.Name()+" "):
		t.Skipf("skipped in the private network namespace:\n%s", out)
	}
	t.Logf("ran in a private network namespace (interfaces %v are up here):\n%s", up, out)
	return true
}

// testPattern is the -test.run pattern that selects exactly the test name
// (subtests included).
func testPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// externalInterfaces returns the names of the network interfaces that are
// up and not loopback.
func externalInterfaces() ([]string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var up []string
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 {
			up = append(up, i.Name)
		}
	}
	return up, nil
}

var errNoNamespace = fmt.Errorf("no private network namespace")
