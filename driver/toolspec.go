package driver

import "github.com/agentcli/agentcli/internal/proc"

// toolSpec is the process of a command of the run's CLI that is not a
// run (Output, Exchange): the CLI with args in the run's directory and
// environment, lines of at most limit bytes, stopped with the run's kill
// grace period.
func (r *Run) toolSpec(args []string, limit int) proc.Spec {
	return proc.Spec{
		Path:      r.Path,
		Args:      args,
		Dir:       r.Dir,
		Env:       r.Env,
		KillGrace: r.Options.KillGrace,
		MaxLine:   limit,
	}
}
