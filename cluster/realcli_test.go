//go:build unix

package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	_ "github.com/agentcli/agentcli/claude"
	_ "github.com/agentcli/agentcli/codex"
	_ "github.com/agentcli/agentcli/copilot"
	_ "github.com/agentcli/agentcli/droid"
	_ "github.com/agentcli/agentcli/gemini"
	_ "github.com/agentcli/agentcli/opencode"
	_ "github.com/agentcli/agentcli/qwen"
)

// TestRealCLIResumesOnAnotherWorker: a conversation on a real, pinned CLI
// moves between workers that share nothing but the pool — two homes wired
// to one scripted model server, each worker's backend running in its own
// home, each mapping the caller's Dir to a directory of its own — with
// cluster.PortableSessions:
//
//  1. a one-shot turn on worker A; A is killed (its connection closed);
//  2. a one-shot run resuming the session (Request.SessionID) on worker B;
//  3. a live session on B resuming it, one turn; B is killed;
//  4. the live session's next turn, on a new worker on home A.
//
// Each resumed turn's model request carries the earlier turns' prompts and
// answers (so the CLI there read the history), each move went through
// the object store (exported by the worker that ran the turn before,
// imported byte for byte by the one that ran the next), and no CLI
// process outlives its worker.
//
// It runs claude and codex (about 15 s each); CLUSTER_REAL_CLIS=all adds
// gemini (about a minute: its live session takes 45 s to resume a session,
// with or without the pool), opencode (about 100 s), copilot, qwen and
// droid, or names the CLIs
// to run, comma-separated. Run it in a private network namespace
// (scripts/test.sh does):
//
//	unshare -n sh -c 'ip link set lo up && go test -race -run RealCLI ./...'
func TestRealCLIResumesOnAnotherWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("real CLIs: not with -short")
	}
	clis := []string{"claude", "codex"}
	switch v := os.Getenv("CLUSTER_REAL_CLIS"); v {
	case "":
	case "all":
		clis = []string{"claude", "codex", "gemini", "opencode", "copilot", "qwen", "droid"}
	default:
		clis = strings.Split(v, ",")
	}
	for _, cli := range clis {
		t.Run(cli, func(t *testing.T) { testResumeOnAnotherWorker(t, strings.TrimSpace(cli)) })
	}
}

func testResumeOnAnotherWorker(t *testing.T, cli string) {
	path := realCLIPath(t, cli)
	srv := agentclitest.NewServer(
		agentclitest.Turn{Text: "answer one ALPHA-DONE"},
		agentclitest.Turn{Text: "answer two BETA-DONE"},
		agentclitest.Turn{Text: "answer three GAMMA-DONE"},
		agentclitest.Turn{Text: "answer four DELTA-DONE"},
	)
	defer srv.Close()
	tag := randomTag()
	homeA, homeB := t.TempDir(), t.TempDir()
	wireA, err := srv.Wire(cli, homeA)
	if err != nil {
		t.Fatal(err)
	}
	wireB, err := srv.Wire(cli, homeB)
	if err != nil {
		t.Fatal(err)
	}
	n := startNATS(t)
	journal := &portJournal{}
	worker := func(name string, w *agentclitest.Wiring) *testWorker {
		// The wiring is the whole environment of the worker's CLI
		// (Request.ReplaceEnv below), plus the tag that finds its
		// processes.
		env := append(append([]string(nil), w.Env...), realCLITagKey+"="+tag)
		b, err := agentcli.Open(cli, &agentcli.Options{Path: path, Env: env, KillGrace: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !b.Capabilities().PortableSessions {
			t.Fatalf("%s: Capabilities().PortableSessions = false", cli)
		}
		o := testWorkerOptions()
		o.CallerDeadAfter = looseDeadAfter
		o.ID = name
		o.Sessions = &recordingPorter{worker: name, journal: journal}
		dir := w.Dir
		o.MapDir = func(string) (string, error) { return dir, nil }
		return startWorker(t, n, b, o)
	}
	po := testOptions()
	po.WorkerDeadAfter = looseDeadAfter
	po.Backend = cli
	pool := newPoolBackend(t, n, po)
	// Workers differ in home and directory, never in what the caller
	// sends: the same Dir (a path each worker maps), no Env of its own.
	request := func(prompt, session string) *agentcli.Request {
		return &agentcli.Request{Prompt: prompt, SessionID: session, Dir: "/project", ReplaceEnv: true,
			ExtraArgs: append([]string(nil), wireA.Args...), Timeout: 3 * time.Minute}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	lastMain := func() agentclitest.ModelRequest {
		t.Helper()
		var last *agentclitest.ModelRequest
		for _, r := range srv.Requests() {
			if !r.Utility {
				last = &r
			}
		}
		if last == nil {
			t.Fatal("no model request reached the server")
		}
		return *last
	}
	carries := func(step string, r agentclitest.ModelRequest, pairs ...string) {
		t.Helper()
		for i := 0; i < len(pairs); i += 2 {
			if !hasMessage(r.Messages, "user", pairs[i]) || !hasMessage(r.Messages, "assistant", pairs[i+1]) {
				t.Errorf("%s: the model request lacks the earlier turn %q → %q: %s", step, pairs[i], pairs[i+1], describeMessages(r.Messages))
			}
		}
	}

	start := time.Now()
	step := func(what string) { t.Logf("%6.1fs %s", time.Since(start).Seconds(), what) }

	// 1. One-shot on A.
	a := worker("A", wireA)
	res1, err := pool.Run(ctx, request("first turn ALPHA", ""))
	if err != nil {
		t.Fatalf("turn 1 on A: %s", errText(err))
	}
	if res1.SessionID == "" || !strings.Contains(res1.Text, "ALPHA-DONE") {
		t.Fatalf("turn 1: session %q, text %q", res1.SessionID, res1.Text)
	}
	step("turn 1 on A")
	if err := a.kill(); err == nil {
		t.Fatal("killed worker A returned nil")
	}
	assertNoCLIProcs(t, "after A was killed", tag)
	step("A killed")

	// 2. One-shot resume on B.
	b := worker("B", wireB)
	res2, err := pool.Run(ctx, request("second turn BETA", res1.SessionID))
	if err != nil {
		t.Fatalf("turn 2 on B: %s; requests: %d", errText(err), len(srv.Requests()))
	}
	if !strings.Contains(res2.Text, "BETA-DONE") {
		t.Errorf("turn 2 text %q", res2.Text)
	}
	step("turn 2 on B")
	carries("turn 2 (one-shot on B)", lastMain(), "first turn ALPHA", "ALPHA-DONE")
	journal.moved(t, "turn 2", "A", "B", res1.SessionID)
	sid := res2.SessionID
	if sid == "" {
		sid = res1.SessionID
	}

	// 3. A live session on B, resuming the session.
	live := *request("", sid)
	s, err := pool.StartSession(ctx, &live)
	if err != nil {
		t.Fatalf("live session on B: %s", errText(err))
	}
	defer s.Close()
	step("live session started on B")
	res3, err := s.Run(ctx, "third turn GAMMA")
	if err != nil {
		t.Fatalf("turn 3 (live, on B): %s", errText(err))
	}
	if !strings.Contains(res3.Text, "GAMMA-DONE") {
		t.Errorf("turn 3 text %q", res3.Text)
	}
	step("turn 3 on B")
	carries("turn 3 (live on B)", lastMain(), "first turn ALPHA", "ALPHA-DONE", "second turn BETA", "BETA-DONE")
	if err := b.kill(); err == nil {
		t.Fatal("killed worker B returned nil")
	}
	assertNoCLIProcs(t, "after B was killed", tag)
	step("B killed")

	// 4. The live session's next turn moves to a new worker on home A.
	worker("A2", wireA)
	res4, err := s.Run(ctx, "fourth turn DELTA")
	if err != nil {
		t.Fatalf("turn 4 (live, moved to A2): %s", errText(err))
	}
	if !strings.Contains(res4.Text, "DELTA-DONE") {
		t.Errorf("turn 4 text %q", res4.Text)
	}
	step("turn 4 on A2")
	carries("turn 4 (live, moved to A2)", lastMain(), "first turn ALPHA", "ALPHA-DONE",
		"second turn BETA", "BETA-DONE", "third turn GAMMA", "GAMMA-DONE")
	journal.moved(t, "turn 4", "B", "A2", s.ID())
	if err := s.Close(); err != nil {
		t.Logf("closing the live session: %v", err)
	}
	step("live session closed")
	t.Logf("%s: moves %s", cli, journal.String())
}

// recordingPorter is cluster.PortableSessions, recording every archive a
// worker exported and imported.
type recordingPorter struct {
	PortableSessions
	worker  string
	journal *portJournal
}

type portRecord struct {
	worker, op, session string
	archive             []byte
}

type portJournal struct {
	mu      sync.Mutex
	records []portRecord
}

func (p *recordingPorter) Export(ctx context.Context, b agentcli.Backend, dir, id string, w io.Writer) error {
	var buf bytes.Buffer
	if err := p.PortableSessions.Export(ctx, b, dir, id, &buf); err != nil {
		return err
	}
	p.journal.add(portRecord{worker: p.worker, op: "export", session: id, archive: bytes.Clone(buf.Bytes())})
	_, err := w.Write(buf.Bytes())
	return err
}

func (p *recordingPorter) Import(ctx context.Context, b agentcli.Backend, dir string, r io.Reader) (string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	id, err := p.PortableSessions.Import(ctx, b, dir, bytes.NewReader(data))
	if err == nil {
		p.journal.add(portRecord{worker: p.worker, op: "import", session: id, archive: data})
	}
	return id, err
}

func (j *portJournal) add(r portRecord) {
	j.mu.Lock()
	j.records = append(j.records, r)
	j.mu.Unlock()
}

// moved checks that the last archive worker to imported for session is
// the last one worker from exported for it, byte for byte.
func (j *portJournal) moved(t *testing.T, step, from, to, session string) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	var exported, imported []byte
	for _, r := range j.records {
		switch {
		case r.worker == from && r.op == "export" && r.session == session:
			exported = r.archive
		case r.worker == to && r.op == "import":
			imported = r.archive
		}
	}
	switch {
	case exported == nil:
		t.Errorf("%s: worker %s exported no archive of session %s (%s)", step, from, session, j.string())
	case imported == nil:
		t.Errorf("%s: worker %s imported no archive (%s)", step, to, j.string())
	case !bytes.Equal(exported, imported):
		t.Errorf("%s: worker %s imported %d bytes, not the %d bytes %s exported", step, to, len(imported), len(exported), from)
	}
}

func (j *portJournal) String() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.string()
}

func (j *portJournal) string() string {
	var parts []string
	for _, r := range j.records {
		parts = append(parts, fmt.Sprintf("%s %s %s (%d bytes)", r.worker, r.op, r.session, len(r.archive)))
	}
	return strings.Join(parts, "; ")
}

func hasMessage(msgs []agentclitest.Message, role, text string) bool {
	for _, m := range msgs {
		if m.Role == role && strings.Contains(m.Text, text) {
			return true
		}
	}
	return false
}

func describeMessages(msgs []agentclitest.Message) string {
	var parts []string
	for _, m := range msgs {
		text := m.Text
		if len(text) > 60 {
			text = text[:60] + "…"
		}
		parts = append(parts, fmt.Sprintf("%s: %q", m.Role, text))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func errText(err error) string { return fmt.Sprintf("%v (%T)", err, err) }

// realCLIPath returns the pinned CLI that scripts/install-clis.sh
// installs; a missing one skips the test, and fails it under CI=true.
func realCLIPath(t *testing.T, cli string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "tools", "clis", "node_modules", ".bin", cli))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		msg := fmt.Sprintf("%s CLI not installed at %s: run scripts/install-clis.sh", cli, p)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (a missing CLI is a failure under CI)")
		}
		t.Skip(msg)
	}
	return p
}

// realCLITagKey marks the environment of every CLI process a test's
// workers start.
const realCLITagKey = "AGENTCLI_CLUSTER_TEST_RUN"

func randomTag() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// assertNoCLIProcs fails t when a process carrying tag is still alive
// (Linux: /proc), after giving a dying one a few seconds.
func assertNoCLIProcs(t *testing.T, when, tag string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	needle := []byte(realCLITagKey + "=" + tag + "\x00")
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left = left[:0]
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
			if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, needle...)) {
				continue
			}
			cmd, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
			left = append(left, d.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("%s: CLI processes still running: %s", when, strings.Join(left, "; "))
	}
}

// TestRealCLIImageThroughThePool: claude on a worker gets an image sent
// through the pool, in a one-shot run and in a live session's turn: the
// scripted model server sees the image block, byte for byte (claude
// passes an image this small on unchanged).
func TestRealCLIImageThroughThePool(t *testing.T) {
	if testing.Short() {
		t.Skip("real CLIs: not with -short")
	}
	srv := agentclitest.NewServer(agentclitest.Turn{Text: "a run IMAGE-ONE"}, agentclitest.Turn{Text: "a turn IMAGE-TWO"})
	defer srv.Close()
	pool, wire, tag := realCLIPool(t, "claude", srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	img := image.NewRGBA(image.Rect(0, 0, 8, 6))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 5)
	}
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		t.Fatal(err)
	}
	att := []agentcli.Attachment{{Name: "shot.png", Data: pngData.Bytes()}}
	sawImage := func(step string) {
		t.Helper()
		reqs := srv.Requests()
		for i := len(reqs) - 1; i >= 0; i-- {
			if reqs[i].Utility {
				continue
			}
			for _, p := range reqs[i].InputParts() {
				if p.Kind == "image" && p.MediaType == "image/png" && bytes.Equal(p.Data, pngData.Bytes()) {
					return
				}
			}
			t.Fatalf("%s: the model request has no image block equal to the PNG sent: %+v", step, reqs[i].InputParts())
		}
		t.Fatalf("%s: no model request reached the server", step)
	}
	req := agentcli.Request{Prompt: "what is this?", Dir: "/project", ReplaceEnv: true,
		ExtraArgs: append([]string(nil), wire.Args...), Timeout: 3 * time.Minute}
	run := req
	run.Attachments = att
	if res, err := pool.Run(ctx, &run); err != nil || !strings.Contains(res.Text, "IMAGE-ONE") {
		t.Fatalf("run: %+v, %s", res, errText(err))
	}
	sawImage("run")
	live := req
	live.Prompt = ""
	sess, err := pool.StartSession(ctx, &live)
	if err != nil {
		t.Fatal(errText(err))
	}
	res, err := agentcli.RunTurn(ctx, sess, &agentcli.Turn{Prompt: "and this?", Attachments: att})
	if err != nil || !strings.Contains(res.Text, "IMAGE-TWO") {
		t.Fatalf("turn: %+v, %s", res, errText(err))
	}
	sawImage("turn")
	_ = sess.Close()
	assertNoCLIProcs(t, "after the session", tag)
}

// realCLIPool returns a pool backend whose one worker runs the real cli
// wired to srv, mapping every Dir to the wiring's, and the tag of its
// CLI processes.
func realCLIPool(t *testing.T, cli string, srv *agentclitest.Server) (*Backend, *agentclitest.Wiring, string) {
	t.Helper()
	path := realCLIPath(t, cli)
	tag := randomTag()
	wire, err := srv.Wire(cli, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := append(append([]string(nil), wire.Env...), realCLITagKey+"="+tag)
	local, err := agentcli.Open(cli, &agentcli.Options{Path: path, Env: env, KillGrace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n := startNATS(t)
	wo := testWorkerOptions()
	wo.CallerDeadAfter = looseDeadAfter
	dir := wire.Dir
	wo.MapDir = func(string) (string, error) { return dir, nil }
	startWorker(t, n, local, wo)
	po := testOptions()
	po.WorkerDeadAfter = looseDeadAfter
	po.Backend = cli
	return newPoolBackend(t, n, po), wire, tag
}

// TestRealCLIHostCallbacksThroughThePool: the real claude, on a worker,
// calls a host tool whose handler runs in the caller (its output reaches
// the model), asks the user a question that the caller's OnQuestion
// answers (the answer reaches the model), and the caller's PreToolUse
// hook sees the tool call before it runs, with its input.
func TestRealCLIHostCallbacksThroughThePool(t *testing.T) {
	if testing.Short() {
		t.Skip("real CLIs: not with -short")
	}
	const cli = "claude"
	srv := agentclitest.NewServer(
		agentclitest.Turn{Tool: &agentclitest.ToolCall{Name: agentclitest.HostToolName(cli, "lookup"), Args: map[string]any{"key": "k1"}}},
		agentclitest.Turn{Tool: agentclitest.QuestionCall(cli, agentcli.Question{Items: []agentcli.QuestionItem{{Header: "Color",
			Text: "Which color?", Options: []agentcli.QuestionOption{{Label: "Red"}, {Label: "Blue"}}}}})},
		agentclitest.Turn{Text: "all done HOST-DONE"})
	defer srv.Close()
	pool, wire, tag := realCLIPool(t, cli, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	type lookupIn struct {
		Key string `json:"key"`
	}
	var mu sync.Mutex
	var seen []string
	note := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	req := agentcli.Request{Prompt: "look it up, then ask me", Dir: "/project", ReplaceEnv: true,
		ExtraArgs: append([]string(nil), wire.Args...), Timeout: 3 * time.Minute, Permission: agentcli.PermissionBypass,
		Tools: []agentcli.Tool{agentcli.NewTool("lookup", "Looks a key up.", func(_ context.Context, in lookupIn) (string, error) {
			note("lookup " + in.Key)
			return "VALUE-OF-" + in.Key + "-7f3a", nil
		})},
		OnQuestion: func(_ context.Context, q *agentcli.Question) (*agentcli.Answer, error) {
			note("question " + q.Items[0].Text)
			return &agentcli.Answer{Answers: [][]string{{"Blue"}}}, nil
		},
		Hooks: &agentcli.Hooks{PreToolUse: func(_ context.Context, in *agentcli.PreToolUseInput) agentcli.PreToolUseOutput {
			if in.Tool.Name == "lookup" {
				note("pre lookup " + string(in.Tool.Input))
			}
			return agentcli.PreToolUseOutput{}
		}},
	}
	res, err := pool.Run(ctx, &req)
	if err != nil || !strings.Contains(res.Text, "HOST-DONE") {
		t.Fatalf("run: %+v, %s", res, errText(err))
	}
	mu.Lock()
	got := strings.Join(seen, "\n")
	mu.Unlock()
	for _, w := range []string{`pre lookup {"key":"k1"}`, "lookup k1", "question Which color?"} {
		if !strings.Contains(got, w) {
			t.Errorf("the caller's functions did not see %q; they saw:\n%s", w, got)
		}
	}
	var outputs []string
	for _, r := range srv.Requests() {
		if r.Utility {
			continue
		}
		for _, tr := range r.ToolResults {
			outputs = append(outputs, tr.Output)
		}
	}
	all := strings.Join(outputs, "\n")
	if !strings.Contains(all, "VALUE-OF-k1-7f3a") {
		t.Errorf("the tool's output did not reach the model; tool results:\n%s", all)
	}
	if !strings.Contains(all, "Blue") {
		t.Errorf("the answer did not reach the model; tool results:\n%s", all)
	}
	assertNoCLIProcs(t, "after the run", tag)
}
