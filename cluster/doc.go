// Package cluster runs agentcli's runs and live sessions on a pool of
// worker machines over NATS JetStream, for the programs that outgrow one
// machine: a chat bot serving a company, an orchestrator with hundreds of
// tasks, a CI service.
//
// A Worker (or the agentcli-worker command) takes the jobs of one backend
// from a JetStream work queue and runs them on a local agentcli.Backend.
// A Backend, the callers' side, is itself an agentcli.Backend (and
// driver.SessionStarter): code written against agentcli runs on the
// pool unchanged.
//
//	nc, _ := nats.Connect(url, nats.MaxReconnects(-1))
//	b, _ := cluster.NewBackend(nc, &cluster.Options{Backend: "claude"})
//	res, err := b.Run(ctx, &agentcli.Request{Prompt: "..."})
//
// # Guarantees
//
//   - A job starts at most once: a worker claims it with a compare-and-set
//     in a key-value bucket before anything runs, and starts the CLI only
//     after the caller's go-ahead. A job whose worker died before that is
//     submitted again (it never started); a run whose worker dies after
//     ends with a *WorkerLostError and is never run again by the pool.
//   - Events arrive complete and in order, whatever the reconnections:
//     each stream's frames are numbered, acknowledged and retransmitted
//     (go-back-N over core NATS). An event larger than a NATS message
//     travels in pieces.
//   - A slow consumer slows its own run: a worker sends at most a window
//     ahead of what the caller consumed (Options.Window), then stops
//     reading its CLI, which blocks on its pipe, as locally.
//   - Callbacks run in the caller's process: OnText, OnPermission (with
//     the request's deadline) and WireLog, in order with the events.
//     Cancellation, Request.Timeout, breaking out of a loop and
//     Session.Interrupt reach the worker's CLI.
//   - Each side finds the other gone after a silence (Options.WorkerDeadAfter,
//     WorkerOptions.CallerDeadAfter) counted only while it is connected,
//     so a NATS restart is not a death.
//   - A live session stays on its worker while it lives there. With
//     WorkerOptions.Sessions (a SessionPorter) every run and turn saves its
//     session to a JetStream object store when it ends, so the next turn
//     or run can resume it on any worker: after its worker died, after it
//     idled out, or for one-shot runs resuming a Result.SessionID. A save
//     that fails is reported (*SessionNotSavedError), never silently
//     skipped.
//
// The module's README describes the wire protocol, deployment (a
// docker-compose file), sizing, and what changes with a hundred workers.
package cluster
