//go:build linux

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
)

// hostEnv makes the conformance test binary a host program instead of a
// test run (see hostMain): its value is a hostJob in JSON.
const hostEnv = "AGENTCLI_CONFORMANCE_HOST"

// hostJob is the run a host program starts.
type hostJob struct {
	CLI, Path   string
	Prompt, Dir string
	Env, Args   []string
	Server      agentcli.MCPServer
}

// maybeHost runs hostMain and exits when the binary was started as a host.
func maybeHost() {
	if v := os.Getenv(hostEnv); v != "" {
		hostMain(v)
	}
}

// hostMain starts the job's run (bypass, one stdio MCP server) and waits
// to be killed; it exits with status 3, saying why, if the run ends
// first.
func hostMain(v string) {
	var j hostJob
	if err := json.Unmarshal([]byte(v), &j); err != nil {
		fmt.Println("HOST-FAIL:", err)
		os.Exit(3)
	}
	b, err := agentcli.Open(j.CLI, &agentcli.Options{Path: j.Path})
	if err != nil {
		fmt.Println("HOST-FAIL:", err)
		os.Exit(3)
	}
	_, err = b.Run(context.Background(), &agentcli.Request{Prompt: j.Prompt, Dir: j.Dir, Env: j.Env, ExtraArgs: j.Args,
		MCPServers: []agentcli.MCPServer{j.Server}, Permission: agentcli.PermissionBypass, Timeout: 5 * time.Minute})
	fmt.Println("HOST-FAIL: the run ended before its host was killed:", err)
	os.Exit(3)
}

// TestHostDies: a program is killed (SIGKILL) in the middle of a run, while
// the CLI waits for the model and its stdio MCP server runs: nothing of
// the CLI's process group outlives it for long, neither the CLI (the
// kernel kills the process agentcli started; copilot's and qwen's are
// launchers whose child is the CLI proper) nor the MCP server, nor what
// the server left behind (the group's sentinel kills them), except where
// the CLI puts its MCP servers in a group of their own (codex).
func TestHostDies(t *testing.T) {
	for _, cli := range []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "droid"} {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, cli, agentclitest.Turn{Stall: true})
			servers, _, _, _ := liveMCPServers(t)
			pidFile := filepath.Join(t.TempDir(), "server.pid")
			srv := servers[0]
			// The server, and then a process that outlives it and pays
			// no attention to its stdin: what a server that started
			// a worker of its own leaves.
			srv.Args = append([]string{"-c", `echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && "$@"; exec sleep 300`, pidFile, srv.Command}, srv.Args...)
			srv.Command = "/bin/sh"
			req, _ := e.request("hello")
			data, err := json.Marshal(hostJob{CLI: cli, Path: cliPath(t, cli), Prompt: req.Prompt, Dir: req.Dir,
				Env: req.Env, Args: req.ExtraArgs, Server: srv})
			if err != nil {
				t.Fatal(err)
			}
			host := exec.Command(os.Args[0], "-test.run=^$")
			// A host that dies leaves its run's temporary directory (and
			// the CLI its own): here, in the test's.
			host.Env = append(os.Environ(), hostEnv+"="+string(data), "TMPDIR="+t.TempDir())
			out := &logBuffer{}
			host.Stdout, host.Stderr = out, out
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { host.Wait(); close(exited) }()
			t.Cleanup(func() { host.Process.Kill(); <-exited })

			// The CLI has started its MCP server and waits for the model.
			var pid int
			for deadline := time.Now().Add(90 * time.Second); pid == 0 || len(e.main()) == 0; time.Sleep(50 * time.Millisecond) {
				select {
				case <-exited:
					t.Fatalf("the host ended by itself: %s", out)
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("after 90 s: MCP server pid %d, %d model calls; host: %s", pid, len(e.main()), out)
				}
				if b, err := os.ReadFile(pidFile); err == nil {
					pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				}
			}
			// The server's parent is the CLI proper; the group is the
			// one agentcli made for the process it started.
			cliPid := ppidOf(pid)
			group, serverGroup := pgidOf(cliPid), pgidOf(pid)
			if group <= 0 || serverGroup <= 0 {
				t.Fatalf("no process group for the CLI %d or its MCP server %d", cliPid, pid)
			}
			// codex starts its MCP servers in a process group of their own,
			// out of the sentinel's reach (README, When the host dies);
			// the others in the CLI's.
			if own := serverGroup != group; own != (cli == "codex") {
				t.Errorf("MCP server in a group of its own: %v (CLI's group %d, the server's %d)", own, group, serverGroup)
			}
			members := groupMembers(group)
			t.Cleanup(func() {
				for _, p := range append(groupMembers(group), groupMembers(serverGroup)...) {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			})
			host.Process.Kill()
			<-exited
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				left := groupMembers(group)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("10 s after the host died, its CLI's group %d (members then: %v) still has %s", group, members, procNames(left))
				}
			}
		})
	}
}

// groupMembers returns the live (not zombie) processes of group pgid.
func groupMembers(pgid int) []int {
	names, _ := os.ReadDir("/proc")
	var out []int
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// procNames describes processes by pid and command line.
func procNames(pids []int) string {
	var parts []string
	for _, p := range pids {
		parts = append(parts, procLine(strconv.Itoa(p)))
	}
	return strings.Join(parts, "; ")
}
