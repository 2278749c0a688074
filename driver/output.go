package driver

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/agentcli/agentcli/internal/proc"
)

// maxOutput bounds what Output keeps of a command's stdout.
const maxOutput = 1 << 20

// Output runs the CLI binary of r with args (no model call: a listing, a
// version) in the run's directory and environment, with stdin at EOF, and
// returns its stdout. It gives up after timeout (or when ctx ends), and
// reaps the process like any run.
func Output(ctx context.Context, r *Run, timeout time.Duration, args ...string) ([]byte, error) {
	return output(ctx, r, timeout, maxOutput, false, args...)
}

// OutputAll is Output for a command whose whole stdout matters (an
// export): more than limit bytes of it is an error rather than cut.
func OutputAll(ctx context.Context, r *Run, timeout time.Duration, limit int, args ...string) ([]byte, error) {
	return output(ctx, r, timeout, limit, true, args...)
}

func output(ctx context.Context, r *Run, timeout time.Duration, limit int, whole bool, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := proc.Start(ctx, r.toolSpec(args, limit))
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var out bytes.Buffer
	for {
		line, err := p.ReadLine()
		if err != nil {
			break
		}
		if out.Len()+len(line.Data) < limit && line.TooLong == 0 {
			out.Write(line.Data)
			out.WriteByte('\n')
		} else if whole {
			return nil, fmt.Errorf("%s %v: more than %d bytes of output", r.Path, args, limit)
		}
	}
	exit := p.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s %v: %w", r.Path, args, ctx.Err())
	case exit.Code != 0:
		return nil, fmt.Errorf("%s %v: exit status %d: %s", r.Path, args, exit.Code, Tail(exit.Stderr, 300))
	}
	return out.Bytes(), nil
}
