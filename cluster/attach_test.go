package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// attachCaps: a worker backend that takes images and text files.
var attachCaps = agentcli.Capabilities{Sessions: true, Interrupt: true,
	PermissionModes: []agentcli.PermissionMode{agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny},
	Attachments:     []agentcli.AttachmentKind{agentcli.AttachmentImage, agentcli.AttachmentText}}

// startAttachPool starts a worker with local and a Backend, with timings
// looser than the other tests': megabytes of attachments on a busy
// machine under the race detector are not what they test.
func startAttachPool(t *testing.T, n *natsServer, local agentcli.Backend) *Backend {
	t.Helper()
	wo := testWorkerOptions()
	wo.CallerDeadAfter = looseDeadAfter
	startWorker(t, n, local, wo)
	o := testOptions()
	o.WorkerDeadAfter = looseDeadAfter
	return newPoolBackend(t, n, o)
}

// testPNG returns n bytes that begin like a PNG image (what agentcli
// decides an attachment's kind from), the rest random.
func testPNG(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(n)})
	_, _ = r.Read(b)
	copy(b, "\x89PNG\r\n\x1a\n")
	return b
}

// attachmentCases: a small image, an image too large for a NATS message
// (the blob path), and a text file given by Path, which the caller reads.
func attachmentCases(t *testing.T) (atts []agentcli.Attachment, want [][]byte, path string) {
	t.Helper()
	small, large := testPNG(300), testPNG(1<<20+300<<10)
	text := []byte("notes: the caller read this file\n")
	path = filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	atts = []agentcli.Attachment{{Name: "small.png", Data: small}, {Name: "large.png", Data: large}, {Path: path}}
	return atts, [][]byte{small, large, text}, path
}

// checkReceived checks that the worker's backend got the attachments
// byte-exact, each with the caller-side name and no path.
func checkReceived(t *testing.T, got []agentcli.Attachment, want [][]byte, names ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("the worker's backend got %d attachments, want %d", len(got), len(want))
	}
	for i, a := range got {
		if !bytes.Equal(a.Data, want[i]) || a.Path != "" || a.Name != names[i] {
			t.Errorf("attachment %d: name %q path %q, %d bytes (equal: %v), want %q with the %d bytes sent",
				i, a.Name, a.Path, len(a.Data), bytes.Equal(a.Data, want[i]), names[i], len(want[i]))
		}
	}
}

// watchWire records every message the NATS server carries (jobs, turns,
// blobs).
func watchWire(t *testing.T, n *natsServer) func() [][]byte {
	t.Helper()
	nc := n.connect(t)
	var mu sync.Mutex
	var msgs [][]byte
	sub, err := nc.Subscribe(">", func(m *nats.Msg) {
		mu.Lock()
		msgs = append(msgs, m.Data)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = sub.SetPendingLimits(-1, -1)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func() [][]byte {
		_ = nc.Flush()
		mu.Lock()
		defer mu.Unlock()
		return msgs
	}
}

// checkNoPath checks that path crossed the wire in no message.
func checkNoPath(t *testing.T, msgs [][]byte, path string) {
	t.Helper()
	for _, m := range msgs {
		if bytes.Contains(m, []byte(path)) {
			t.Fatalf("a message carries the attachment's path: %.300q", m)
		}
	}
}

// checkBlobsGone checks that the worker deleted the blobs it read.
func checkBlobsGone(t *testing.T, b *Backend) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	infos, err := b.res.blobs.List(ctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Fatal(err)
	}
	if len(infos) != 0 {
		t.Errorf("%d blobs left in the store, the first %s", len(infos), infos[0].Name)
	}
}

// TestAttachmentsRun: a run's attachments reach the worker's backend
// byte-exact: a small image in the job message, one too large for a
// message through the blobs store (deleted once read), and a text file
// by Path, read on the caller's side: the path never crosses the wire.
func TestAttachmentsRun(t *testing.T) {
	n := startNATS(t)
	local := scripted(agentclitest.Reply("seen", "s1"), attachCaps)
	b := startAttachPool(t, n, local)
	wire := watchWire(t, n)
	atts, want, path := attachmentCases(t)

	res, err := b.Run(context.Background(), &agentcli.Request{Prompt: "look", Attachments: atts})
	if err != nil || res.Text != "seen" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	reqs := local.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the worker's backend got %d requests", len(reqs))
	}
	checkReceived(t, reqs[0].Attachments, want, "small.png", "large.png", "notes.txt")
	checkNoPath(t, wire(), path)
	checkBlobsGone(t, b)
	if atts[2].Path != path || atts[2].Data != nil {
		t.Errorf("the caller's request was changed: %+v", atts[2])
	}
}

// TestAttachmentsTurn: a live session's turn carries its attachments to
// the worker's session byte-exact, a large one through the blobs store,
// a Path read on the caller's side; a turn without attachments still
// works after.
func TestAttachmentsTurn(t *testing.T) {
	n := startNATS(t)
	local := scripted(agentclitest.Reply("seen", "s1"), attachCaps)
	b := startAttachPool(t, n, local)
	ctx := context.Background()
	sess, err := b.StartSession(ctx, &agentcli.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	wire := watchWire(t, n)
	atts, want, path := attachmentCases(t)

	for i, turn := range []*agentcli.Turn{{Prompt: "small", Attachments: atts[:1]}, {Prompt: "all", Attachments: atts}} {
		res, err := agentcli.RunTurn(ctx, sess, turn)
		if err != nil || res.Text != "seen" {
			t.Fatalf("turn %d: %+v, %v", i, res, err)
		}
	}
	if res, err := sess.Run(ctx, "plain"); err != nil || res.Text != "seen" {
		t.Fatalf("plain turn: %+v, %v", res, err)
	}
	var turns []agentcli.Request
	for _, r := range local.Requests() {
		if r.Prompt != "" {
			turns = append(turns, r)
		}
	}
	if len(turns) != 3 || turns[0].Prompt != "small" || turns[1].Prompt != "all" || turns[2].Prompt != "plain" {
		t.Fatalf("the worker's session got %+v", turns)
	}
	checkReceived(t, turns[0].Attachments, want[:1], "small.png")
	checkReceived(t, turns[1].Attachments, want, "small.png", "large.png", "notes.txt")
	if len(turns[2].Attachments) != 0 {
		t.Errorf("plain turn got %d attachments", len(turns[2].Attachments))
	}
	checkNoPath(t, wire(), path)
	checkBlobsGone(t, b)
}

// TestAttachmentsRefusedBeforeQueueing: a kind the pool's backend does
// not take (Capabilities.Attachments) is refused on the caller's side,
// with the *agentcli.UnsupportedError a local backend gives, before
// anything is queued; so is an unreadable Path (a *RequestError), and
// attachments on a session's start. A turn's are refused before anything
// is sent, and the session goes on.
func TestAttachmentsRefusedBeforeQueueing(t *testing.T) {
	n := startNATS(t)
	textOnly := attachCaps
	textOnly.Attachments = []agentcli.AttachmentKind{agentcli.AttachmentText}
	opts := testOptions()
	opts.Capabilities = &textOnly // no worker: a queued job would wait
	b := newPoolBackend(t, n, opts)
	if got := b.Capabilities().Attachments; len(got) != 1 || got[0] != agentcli.AttachmentText {
		t.Errorf("Capabilities().Attachments = %v, want the backend's [text]", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	png := []agentcli.Attachment{{Name: "a.png", Data: testPNG(100)}}

	_, err := b.Run(ctx, &agentcli.Request{Prompt: "p", Attachments: png})
	var ue *agentcli.UnsupportedError
	if !errors.As(err, &ue) || ue.Feature != "image attachments" {
		t.Errorf("an image for a text-only backend: %v, want the *UnsupportedError a local backend gives", err)
	}
	_, err = b.Run(ctx, &agentcli.Request{Prompt: "p", Attachments: []agentcli.Attachment{{Path: filepath.Join(t.TempDir(), "none")}}})
	var re *agentcli.RequestError
	if !errors.As(err, &re) || re.Field != "Attachments[0]" {
		t.Errorf("a missing Path: %v, want a *RequestError", err)
	}
	_, err = b.StartSession(ctx, &agentcli.Request{Attachments: []agentcli.Attachment{{Data: []byte("t")}}})
	if !errors.As(err, &re) || re.Field != "Attachments" {
		t.Errorf("attachments on StartSession: %v, want a *RequestError", err)
	}
	s := &session{b: b, slot: make(chan struct{}, 1), closed: make(chan struct{})}
	_, err = agentcli.RunTurn(ctx, s, &agentcli.Turn{Prompt: "p", Attachments: png})
	if !errors.As(err, &ue) || ue.Feature != "image attachments" {
		t.Errorf("an image in a turn: %v, want an *UnsupportedError", err)
	}
	if ctx.Err() != nil {
		t.Fatal("a refusal waited")
	}
	str, err := b.js.Stream(ctx, b.res.workName)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := str.Info(ctx); err != nil || info.State.Msgs != 0 {
		t.Errorf("work queue: %+v, %v; want nothing queued", info, err)
	}
}

// rawJob submits the job jobJSON returns for the call's id (a caller
// that does not go through Backend.Stream: a hostile one), with blob
// stored under that id when not nil, and returns how the worker ended
// it.
func rawJob(t *testing.T, b *Backend, blob []byte, jobJSON func(id string) string) (*wireEnd, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := b.newCall(&agentcli.Request{})
	if err := c.open(); err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if blob != nil {
		if _, err := b.res.blobs.PutBytes(ctx, c.id, blob); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.js.Publish(ctx, workSubject(b.opts.Prefix, b.opts.Backend), []byte(jobJSON(c.id))); err != nil {
		t.Fatal(err)
	}
	if err := b.waitAccept(ctx, c); err != nil {
		t.Fatal(err)
	}
	end, err, _ := c.consume(ctx, 0, func(agentcli.Event, error) bool { return true })
	return end, err
}

// rawTurn sends the turn payload turnJSON returns for a new stream id to
// session s's worker (as a hostile caller would), storing blob under the
// id when not nil, and returns the worker's reply, then how it ended the
// turn when it took it.
func rawTurn(t *testing.T, s *session, blob []byte, turnJSON func(id string) string) (replyErr error, end *wireEnd, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := s.b
	c := b.newCall(&s.req)
	if blob != nil {
		if _, err := b.res.blobs.PutBytes(ctx, c.id, blob); err != nil {
			t.Fatal(err)
		}
	}
	c.pinned(s.home.Worker, b.opts.Heartbeat)
	if err := c.open(); err != nil {
		t.Fatal(err)
	}
	defer c.close()
	msg, err := b.nc.Request(s.home.Subject, newFrame(kindTurn, 0, []byte(turnJSON(c.id))), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseReply(msg.Data); err != nil {
		return err, nil, nil
	}
	end, err, _ = c.consume(ctx, 0, func(agentcli.Event, error) bool { return true })
	return nil, end, err
}

// hostileSecret returns a file whose path a hostile message names, and
// fails t if the worker's backend ever got its content.
func hostileSecret(t *testing.T, local *agentclitest.Backend) string {
	t.Helper()
	secret := []byte("secret of the worker's machine")
	path := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(path, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, r := range local.Requests() {
			for _, a := range r.Attachments {
				if bytes.Contains(a.Data, secret) {
					t.Errorf("the worker read the file a message named: %+v", a)
				}
			}
		}
	})
	return path
}

// TestAttachmentsHostileJob: a worker treats the wire as hostile: an
// attachment that names a Path (never sent by a caller) arrives without
// content and is refused, the file never read; a blob larger than any
// request a caller sends is refused without being read whole, and
// deleted; a job whose blob is not its own is dropped.
func TestAttachmentsHostileJob(t *testing.T) {
	n := startNATS(t)
	local := scripted(agentclitest.Reply("ran", "s1"), attachCaps)
	b := startAttachPool(t, n, local)
	path := hostileSecret(t, local)
	hb := b.opts.Heartbeat.Nanoseconds()

	end, err := rawJob(t, b, nil, func(id string) string {
		return `{"v":1,"id":"` + id + `","kind":"run","hb":` + itoa(int(hb)) +
			`,"req":{"prompt":"p","attachments":[{"name":"s","path":` + jsonString(path) + `}]}}`
	})
	var re *agentcli.RequestError
	if err != nil || end == nil || !errors.As(decodeError(end.Err), &re) || re.Field != "Attachments[0]" {
		t.Errorf("a job with a Path: end %+v, %v; want a *RequestError for Attachments[0]", end, err)
	}

	end, err = rawJob(t, b, make([]byte, maxBlobBytes+1), func(id string) string {
		return `{"v":1,"id":"` + id + `","kind":"run","hb":` + itoa(int(hb)) + `,"blob":"` + id + `"}`
	})
	if err != nil || end == nil || !errors.As(decodeError(end.Err), &re) || !strings.Contains(re.Reason, "over") {
		t.Errorf("an oversized blob: end %+v, %v; want a *RequestError", end, err)
	}
	checkBlobsGone(t, b)
}

// TestAttachmentsHostileTurn: as TestAttachmentsHostileJob, for a live
// session's turn: a Path is dropped and the turn refused (the session
// goes on), an oversized blob refused and deleted, and a turn naming a
// blob other than its own gets the "malformed" reply.
func TestAttachmentsHostileTurn(t *testing.T) {
	n := startNATS(t)
	local := scripted(agentclitest.Reply("ran", "s1"), attachCaps)
	b := startAttachPool(t, n, local)
	sess, err := b.StartSession(context.Background(), &agentcli.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	s := sess.(*session)
	path := hostileSecret(t, local)
	hb := itoa(int(b.opts.Heartbeat.Nanoseconds()))

	rerr, end, err := rawTurn(t, s, nil, func(id string) string {
		return `{"stream":"` + id + `","prompt":"p","hb":` + hb + `,"attachments":[{"name":"s","path":` + jsonString(path) + `}]}`
	})
	var re *agentcli.RequestError
	if rerr != nil || err != nil || end == nil || end.SessionDead || !errors.As(decodeError(end.Err), &re) || re.Field != "Attachments[0]" {
		t.Errorf("a turn with a Path: reply %v, end %+v, %v; want a *RequestError for Attachments[0]", rerr, end, err)
	}

	rerr, end, err = rawTurn(t, s, make([]byte, maxBlobBytes+1), func(id string) string {
		return `{"stream":"` + id + `","hb":` + hb + `,"blob":"` + id + `"}`
	})
	if rerr != nil || err != nil || end == nil || !errors.As(decodeError(end.Err), &re) || !strings.Contains(re.Reason, "over") {
		t.Errorf("an oversized blob: reply %v, end %+v, %v; want a *RequestError", rerr, end, err)
	}
	checkBlobsGone(t, b)

	rerr, _, _ = rawTurn(t, s, nil, func(id string) string {
		return `{"stream":"` + id + `","hb":` + hb + `,"blob":"` + newID() + `"}`
	})
	if !errors.As(rerr, &re) || re.Reason != "malformed" {
		t.Errorf("a turn naming another's blob: reply %v, want the malformed reply", rerr)
	}
	if res, err := sess.Run(context.Background(), "still there"); err != nil || res.Text != "ran" {
		t.Errorf("the session after: %+v, %v", res, err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
