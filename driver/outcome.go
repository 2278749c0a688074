package driver

import (
	"bytes"
	"strings"
	"time"

	"github.com/agentcli/agentcli"
)

// Outcome is how a run ended as its CLI's output tells it: what a
// Parser's End returns. It is plain data; the kit turns it into the run's
// Result or its typed error (see Errors.Outcome), the same way for every
// backend.
type Outcome struct {
	// Result is the run as the CLI's terminal event reported it. Nil
	// when the CLI printed no terminal event: the run's error then says
	// how the process exited (an *agentcli.ExitError, or an
	// *agentcli.NoResultError after exit status 0).
	Result *agentcli.Result
	// Failed reports that the run failed, whatever its exit status: its
	// error is an *agentcli.ResultError with the fields below and Result
	// (marked IsError).
	Failed bool
	// Subtype, TerminalReason, APIStatus and Message describe the
	// failure as the CLI reported it (see agentcli.ResultError).
	Subtype        string
	TerminalReason string
	APIStatus      int
	Message        string
	// Kind, if set, classifies the failure, or without a Result the exit
	// (an exit status the CLI documents): agentcli.ErrAuth,
	// ErrRateLimited, ErrSessionNotFound. Unset, the kit classifies from
	// an HTTP APIStatus, then from the message and stderr (the Spec's
	// Classify, then generic wording).
	Kind error
	// Unparsed, if set, is the start of output that should have held
	// the outcome but could not be read, and UnparsedErr says why: a run
	// that printed no Result and exited 0 is then an
	// *agentcli.ParseError rather than an *agentcli.NoResultError.
	Unparsed    []byte
	UnparsedErr error
	// ResetsAt, RetryAfter and RateLimit, for a failure that is a rate
	// limit, are when the limit resets, the delay the CLI suggested
	// instead, and its state as last reported (any may be zero): the
	// error is then an *agentcli.RateLimitError carrying them (see
	// RateLimited). Without either time, a delay the message suggests
	// ("retry after 3s", see RetryAfter) is taken.
	ResetsAt   time.Time
	RetryAfter time.Duration
	RateLimit  *agentcli.RateLimit
}

// Errors builds the typed errors of one run or live session of a
// backend. Each error is complete when it is made, and nothing changes it
// afterwards: it names the backend, has its kind (see Outcome.Kind) and
// the Spec's hint, the CLI's output it carries is redacted and bounded,
// and the Raw of its Result is within the run's limit
// (Request.MaxRawBytes). An Errors is safe for concurrent use.
type Errors struct {
	spec     *Spec
	red      *Redactor
	rawLimit int
	schema   bool // the request has an output schema
}

// NewErrors returns the Errors of a run of req by the backend that spec
// declares, redacting with red. A nil red redacts what this process's
// environment holds (ProcessRedactor); req may be nil.
func NewErrors(spec *Spec, red *Redactor, req *agentcli.Request) *Errors {
	if red == nil {
		red = ProcessRedactor()
	}
	if req == nil {
		req = &agentcli.Request{}
	}
	return &Errors{spec: spec, red: red, rawLimit: RawLimit(req), schema: len(req.OutputSchema) > 0}
}

// Errors returns the run's Errors: its backend's, redacting with the
// run's redactor.
func (r *Run) Errors() *Errors { return NewErrors(r.spec, r.red, r.Req) }

// Backend returns the name of the backend whose errors x builds.
func (x *Errors) Backend() string { return x.spec.Name }

// Outcome returns the Result of a run (or a live session's turn) that
// ended as o says, its CLI having exited as e says (the zero Exit for a
// turn), or its error: an *agentcli.ResultError (with
// the Result) for a failure, an *agentcli.ExitError,
// *agentcli.NoResultError or *agentcli.ParseError for a run without a
// Result. A run whose request has an output schema fails when its answer
// is not JSON. The Result's strings are copies of their own (a Result is
// kept, often long after the run, and must not keep the output's memory
// alive), its CLI output redacted.
func (x *Errors) Outcome(o Outcome, e Exit) (*agentcli.Result, error) {
	res := x.result(o.Result, e, o.Failed)
	switch {
	case o.Failed:
		return res, x.rateLimited(x.failure(res, o, e), o)
	case res == nil:
		return nil, x.rateLimited(x.noResult(o, e), o)
	case x.schema && !structured(res):
		res.IsError = true
		res.Stderr = x.stderr(e)
		return res, x.failure(res, Outcome{Message: errNotJSON}, e)
	}
	return res, nil
}

// rateLimited is RateLimited for the error of outcome o.
func (x *Errors) rateLimited(err error, o Outcome) error {
	if o.ResetsAt.IsZero() && o.RetryAfter == 0 {
		o.RetryAfter = RetryAfter(o.Message)
	}
	return RateLimited(x.spec.Name, err, o.ResetsAt, o.RetryAfter, o.RateLimit)
}

// errNotJSON is the message of an answer that is not the JSON value the
// output schema asks for.
const errNotJSON = "the final answer is not the JSON value the output schema asks for"

// Exited returns the error of a CLI that exited as e says with no
// outcome of its own (a live session's CLI that died): an
// *agentcli.ExitError, or an *agentcli.NoResultError after exit status 0.
func (x *Errors) Exited(e Exit) error {
	return x.noResult(Outcome{}, e)
}

// Structured completes the result of a successful turn of a live session
// whose request has an output schema, as a run's result is completed:
// when the CLI reported no structured value, the answer must be one (it
// becomes Result.StructuredOutput). It returns the *agentcli.ResultError
// of an answer that is not JSON, with res marked IsError.
func (x *Errors) Structured(res *agentcli.Result) error {
	if structured(res) {
		return nil
	}
	res.IsError = true
	return x.failure(res, Outcome{Message: errNotJSON}, Exit{})
}

// Protocol returns the *agentcli.ProtocolError of a request the CLI
// answered with an error: msg redacted and bounded, and classified (a
// session that does not exist, credentials, rate limits), or of kind
// fallback (which may be nil) when its wording says nothing.
func (x *Errors) Protocol(method string, code int, msg string, fallback error) *agentcli.ProtocolError {
	kind := x.spec.classify(msg)
	if kind == nil {
		kind = fallback
	}
	return &agentcli.ProtocolError{Backend: x.spec.Name, Method: x.red.Redact(method), Code: code,
		Message: x.red.Tail(msg, 500), Kind: kind}
}

// Timeout returns the *agentcli.TimeoutError of a run that its timeout
// ended, the CLI having exited as e says.
func (x *Errors) Timeout(timeout time.Duration, e Exit) *agentcli.TimeoutError {
	return &agentcli.TimeoutError{Backend: x.spec.Name, Timeout: timeout, Stderr: x.stderr(e)}
}

// result completes the Result the CLI reported, for a run that failed or
// not; nil stays nil.
func (x *Errors) result(res *agentcli.Result, e Exit, failed bool) *agentcli.Result {
	if res == nil {
		return nil
	}
	x.red.Result(res)
	if len(res.Raw) > x.rawLimit {
		res.Raw = nil // not copied only to be dropped
	}
	res.ExitCode = e.Code
	if failed {
		res.IsError = true
	}
	if res.IsError {
		res.Stderr = x.stderr(e)
	}
	detachResult(res)
	return res
}

// failure returns the *agentcli.ResultError of a failed run.
func (x *Errors) failure(res *agentcli.Result, o Outcome, e Exit) *agentcli.ResultError {
	kind := o.Kind
	if kind == nil {
		kind = ClassifyStatus(o.APIStatus)
	}
	if kind == nil {
		kind = x.spec.classify(o.Message + "\n" + e.Stderr)
	}
	return &agentcli.ResultError{
		Backend:        x.spec.Name,
		Subtype:        x.red.Redact(o.Subtype),
		APIStatus:      o.APIStatus,
		TerminalReason: x.red.Redact(o.TerminalReason),
		Message:        x.red.Tail(o.Message, 500),
		ExitCode:       e.Code,
		Kind:           kind,
		Result:         res,
	}
}

// noResult returns the error of a run without a Result.
func (x *Errors) noResult(o Outcome, e Exit) error {
	switch {
	case e.Code != 0:
		kind := o.Kind
		if kind == nil {
			kind = x.spec.classify(x.spec.cleanStderr(e.Stderr))
		}
		hint := ""
		if x.spec.Hint != nil {
			hint = x.red.Redact(x.spec.Hint(e))
		}
		return &agentcli.ExitError{Backend: x.spec.Name, Code: e.Code, Stderr: x.stderr(e), Kind: kind, Hint: hint}
	case o.Unparsed != nil || o.UnparsedErr != nil:
		return &agentcli.ParseError{Backend: x.spec.Name, Line: []byte(x.red.Redact(string(o.Unparsed))), Err: o.UnparsedErr}
	}
	return &agentcli.NoResultError{Backend: x.spec.Name, Code: e.Code, Stderr: x.stderr(e)}
}

// stderr is what a run reports of stderr: its end, noise and secrets
// removed (redacted before it is cut; when the CLI wrote more than the
// tail holds, a fragment at the start that may be the end of a secret is
// dropped).
func (x *Errors) stderr(e Exit) string {
	stderr := x.spec.cleanStderr(e.Stderr)
	if e.Truncated {
		return x.red.TruncatedTail(stderr, 500)
	}
	return x.red.Tail(stderr, 500)
}

// cleanStderr removes the noise the CLI prints on stderr (Spec.Stderr).
func (s *Spec) cleanStderr(stderr string) string {
	if s.Stderr != nil {
		return s.Stderr(stderr)
	}
	return stderr
}

// detachResult gives res memory of its own. The parser's strings and Raw
// may share the memory of the lines they came from, which may be far
// longer than the field (a huge line whose strings were decoded in place);
// a Result is what callers keep after a run, often for long and alone, so
// it must not keep a line alive. It costs one copy of a few fields once
// per run.
func detachResult(res *agentcli.Result) {
	for _, s := range []*string{&res.Text, &res.SessionID, &res.Model, &res.StopReason, &res.Subtype, &res.TerminalReason, &res.Stderr} {
		*s = strings.Clone(*s)
	}
	res.StructuredOutput = bytes.Clone(res.StructuredOutput)
	res.Raw = bytes.Clone(res.Raw)
}
