package agentcli_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/agentclitest"
	"github.com/agentcli/agentcli/driver"
)

// slowDiagnoser diagnoses itself as a CLI would, taking its time, and
// counts how many diagnoses run at once.
type slowDiagnoser struct {
	*agentclitest.Backend
	probe *diagnoseProbe
}

type diagnoseProbe struct {
	mu        sync.Mutex
	running   int
	most      int
	enough    int           // running this many at once is the bound
	reachedIt chan struct{} // closed when enough run at once
	closed    bool
}

func (b slowDiagnoser) Diagnose(ctx context.Context) agentcli.Diagnosis {
	p := b.probe
	p.mu.Lock()
	p.running++
	p.most = max(p.most, p.running)
	reached := p.reachedIt
	if p.running == p.enough && !p.closed {
		close(reached)
		p.closed = true
	}
	p.mu.Unlock()
	// Hold the slot until the bound is reached (or, if it never is, a
	// while), so that an unbounded Doctor shows as more than the bound
	// at once.
	select {
	case <-reached:
		time.Sleep(20 * time.Millisecond)
	case <-time.After(5 * time.Second):
	}
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	return agentcli.Diagnosis{Backend: b.Name(), Status: agentcli.DiagnosisOK}
}

var (
	registerSlowOnce sync.Once
	slowProbe        *diagnoseProbe
	slowNames        []string
)

// Doctor starts a CLI per backend, seconds of CPU each: it diagnoses as
// many at a time as the machine has CPUs (two at least), so that no
// diagnosis's time limit runs out waiting for the CPU.
func TestDoctorBoundsConcurrency(t *testing.T) {
	bound := max(2, runtime.NumCPU())
	registerSlowOnce.Do(func() {
		slowProbe = &diagnoseProbe{enough: bound}
		for i := range bound + 3 {
			name := fmt.Sprintf("zz-slow-doctor-%02d", i)
			slowNames = append(slowNames, name)
			driver.Register(name, func(*agentcli.Options) agentcli.Backend {
				return slowDiagnoser{Backend: &agentclitest.Backend{BackendName: name}, probe: slowProbe}
			})
		}
	})
	slowProbe.mu.Lock()
	slowProbe.most, slowProbe.reachedIt, slowProbe.closed = 0, make(chan struct{}), false
	slowProbe.mu.Unlock()
	ds := agentcli.Doctor(context.Background(), nil)
	var ok int
	for _, d := range ds {
		if slices.Contains(slowNames, d.Backend) && d.Status == agentcli.DiagnosisOK {
			ok++
		}
	}
	if ok != len(slowNames) {
		t.Fatalf("%d of the %d slow backends diagnosed OK: %+v", ok, len(slowNames), ds)
	}
	slowProbe.mu.Lock()
	defer slowProbe.mu.Unlock()
	if slowProbe.most != bound {
		t.Fatalf("at most %d diagnoses ran at once; want %d (the CPUs, two at least)", slowProbe.most, bound)
	}
}
