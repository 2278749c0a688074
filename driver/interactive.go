package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/proc"
)

// MaxArgLen is the longest single argument Linux passes to a new program
// (MAX_ARG_STRLEN: 32 pages of 4 KiB, the terminating NUL included).
const MaxArgLen = 32*4096 - 1

// Interactive implements Interactor: it runs the CLI's own
// interactive UI on term, as Spec.Interactive builds it, with the run
// contract of Run (validation, environment, private files, timeout, the
// kill ladder and reaping) and returns the CLI's exit status. See
// agentcli.Interactive.
func (b *Backend) Interactive(ctx context.Context, req *agentcli.Request, term *agentcli.Terminal) (int, error) {
	if b.spec.Interactive == nil {
		return -1, &agentcli.UnsupportedError{Backend: b.spec.Name, Feature: "interactive mode"}
	}
	if req == nil {
		req = &agentcli.Request{}
	}
	red := ProcessRedactor()
	lg := b.newRunLog(ctx, req)
	code, err := b.interactive(ctx, req, term, lg, &red)
	if err != nil {
		err = red.Error(err)
	}
	lg.err = err
	lg.end(red)
	return code, err
}

func (b *Backend) interactive(ctx context.Context, req *agentcli.Request, term *agentcli.Terminal, lg *runLog, red **Redactor) (int, error) {
	r, err := b.prepareInteractive(req)
	if err != nil {
		return -1, err
	}
	defer r.Cleanup()
	*red = NewRedactor(redactEnv(r.Env, req))

	in, out, errOut := terminalFiles(term)
	runCtx := ctx
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	ended := func() error {
		if ctx.Err() != nil {
			return &agentcli.CanceledError{Backend: b.spec.Name, Err: context.Cause(ctx)}
		}
		return &agentcli.TimeoutError{Backend: b.spec.Name, Timeout: req.Timeout}
	}
	job, err := b.spec.Interactive(runCtx, r)
	if err != nil {
		if runCtx.Err() != nil {
			err = ended()
		}
		return -1, err
	}
	if err := b.checkTerminalJob(req, job, in, out); err != nil {
		return -1, err
	}
	env := append(r.Env[:len(r.Env):len(r.Env)], job.Env...)
	*red = NewRedactor(redactEnv(env, req))
	if runCtx.Err() != nil {
		return -1, ended()
	}
	lg.started(r, job.Args, *red) // the prompt in argv is elided there
	p, err := proc.StartTerminal(runCtx, proc.TerminalSpec{
		Path:      r.Path,
		Args:      job.Args,
		Dir:       r.Dir,
		Env:       env,
		Stdin:     in,
		Stdout:    out,
		Stderr:    errOut,
		KillGrace: b.opts.KillGrace,
	})
	switch {
	case err == nil:
	case runCtx.Err() != nil:
		return -1, ended()
	case errors.Is(err, proc.ErrNotForeground):
		return -1, &agentcli.RequestError{Backend: b.spec.Name, Field: "Terminal.Stdin",
			Reason: "this process runs in the background of its controlling terminal; the CLI cannot take the terminal from the foreground job"}
	case errors.Is(err, proc.ErrNotTerminal):
		return -1, b.notTerminal("Terminal.Stdin")
	default:
		return -1, StartError(b.spec.Name, r.Path, err)
	}
	defer p.Close()
	lg.spawnedAt(p.Pid())
	exit := p.Wait()
	if exit.Stopped && runCtx.Err() != nil {
		return -1, ended()
	}
	return b.terminalExit(exit)
}

// checkTerminalJob refuses an interactive job the kit cannot run: one
// with stdin (the terminal is the CLI's), arguments over the kernel's
// limit, or a terminal that is not one. The terminal is checked last: a
// request the CLI cannot run as asked (an unsupported mode or setting, a
// bad field) is reported as such whatever the terminal.
func (b *Backend) checkTerminalJob(req *agentcli.Request, job *Job, in, out *os.File) error {
	if job.Stdin != nil {
		return fmt.Errorf("%s: internal error: an interactive job has stdin", b.spec.Name)
	}
	if err := checkArgLen(b.spec.Name, req, job.Args); err != nil {
		return err
	}
	if !proc.IsTerminal(in) {
		return b.notTerminal("Terminal.Stdin")
	}
	if !proc.IsTerminal(out) {
		return b.notTerminal("Terminal.Stdout")
	}
	return nil
}

// notTerminal is the error of a Terminal field that is not a terminal.
func (b *Backend) notTerminal(field string) error {
	return &agentcli.RequestError{Backend: b.spec.Name, Field: field,
		Reason: "not a terminal (an interactive UI needs one; a program can open a pseudo-terminal)"}
}

// prepareInteractive validates req for an interactive UI and prepares
// its run.
func (b *Backend) prepareInteractive(req *agentcli.Request) (*Run, error) {
	if err := b.checkInteractive(req); err != nil {
		return nil, err
	}
	if err := interactiveManage(b.spec.Name, req); err != nil {
		return nil, err
	}
	// The UI asks the person at the terminal: the permission callback
	// is not needed, and which modes exist is the UI's business. A copy
	// is validated without them; Spec.Interactive gets the mode back.
	rq := *req
	rq.Permission, rq.OnPermission = agentcli.PermissionBypass, nil // every backend has it
	// The person at the terminal is the limit: a turn or spending limit
	// the backend lacks is not refused here, as it is for a run (the UI
	// warns about the ones it cannot take: Run.Unsupported).
	if !b.spec.Caps.MaxTurns {
		rq.MaxTurns = 0
	}
	if !b.spec.Caps.MaxBudget {
		rq.MaxBudgetUSD = 0
	}
	r, err := b.prepareRun(&rq, false, false)
	if err != nil {
		return nil, err
	}
	vr := *r.Req // validated (and without the settings the backend lacks)
	vr.Permission, vr.MaxTurns = req.Permission, req.MaxTurns
	r.Req = &vr
	r.backend = b.spec.Name
	return r, nil
}

// terminalFiles returns the terminal's files, the process's own where
// term leaves one unset.
func terminalFiles(term *agentcli.Terminal) (in, out, errOut *os.File) {
	in, out, errOut = os.Stdin, os.Stdout, os.Stderr
	if term != nil {
		if term.Stdin != nil {
			in = term.Stdin
		}
		if term.Stdout != nil {
			out = term.Stdout
		}
		if term.Stderr != nil {
			errOut = term.Stderr
		}
	}
	return in, out, errOut
}

// terminalExit is the exit code of an interactive CLI that ended by
// itself, or the error of one that could not be waited for or was killed.
func (b *Backend) terminalExit(exit proc.Exit) (int, error) {
	switch {
	case exit.Err != nil:
		return -1, fmt.Errorf("%s: waiting for the CLI: %w", b.spec.Name, exit.Err)
	case exit.Signal != 0:
		return -1, &agentcli.ExitError{Backend: b.spec.Name, Code: -1,
			Hint: fmt.Sprintf("the CLI was killed by signal %d (%v)", int(exit.Signal), exit.Signal)}
	}
	return exit.Code, nil
}

// checkInteractive checks what the run's validation does not see: the
// prompt, which reaches an interactive CLI in its arguments (where a run
// writes it to stdin), and the permission mode, which Spec.Interactive
// maps.
func (b *Backend) checkInteractive(req *agentcli.Request) error {
	if strings.IndexByte(req.Prompt, 0) >= 0 {
		return &agentcli.RequestError{Backend: b.spec.Name, Field: "Prompt", Reason: "contains a NUL byte"}
	}
	switch m := req.Permission; m {
	case "", agentcli.PermissionBypass, agentcli.PermissionAsk, agentcli.PermissionDeny, agentcli.PermissionPlan:
	default:
		return &agentcli.RequestError{Backend: b.spec.Name, Field: "Permission", Reason: fmt.Sprintf("unknown mode %q", m)}
	}
	if len(req.Tools) > 0 || req.OnQuestion != nil || req.Hooks != nil {
		// The UI is the person's: nothing of the host's runs in it.
		return &agentcli.UnsupportedError{Backend: b.spec.Name, Feature: "host tools, questions and hooks in interactive mode",
			Reason: "the CLI's own UI asks the person at the terminal"}
	}
	return nil
}

// checkArgLen refuses an argument the kernel would refuse (E2BIG): an
// interactive CLI gets its first message as an argument.
func checkArgLen(backend string, req *agentcli.Request, args []string) error {
	for _, a := range args {
		if len(a) <= MaxArgLen {
			continue
		}
		field := "ExtraArgs"
		if req.Prompt != "" && strings.Contains(a, req.Prompt) {
			field = "Prompt"
		} else if req.SystemPrompt != "" && strings.Contains(a, req.SystemPrompt) {
			field = "SystemPrompt"
		}
		return &agentcli.RequestError{Backend: backend, Field: field,
			Reason: fmt.Sprintf("%d bytes in one argument of the interactive CLI's command line; the limit is %d", len(a), MaxArgLen)}
	}
	return nil
}

// Unsupported reports a Request option the CLI's interactive UI cannot
// honour: a warning on the backend's logger, or, under Options.Strict, an
// *agentcli.UnsupportedError to return. For Spec.Interactive.
func (r *Run) Unsupported(feature string) error {
	if r.Options != nil && r.Options.Strict {
		return &agentcli.UnsupportedError{Backend: r.backend, Feature: feature, Reason: "in interactive mode"}
	}
	r.Warn("interactive: "+feature, fmt.Sprintf("agentcli: %s does not support %s in interactive mode; ignored", r.backend, feature),
		"backend", r.backend)
	return nil
}
