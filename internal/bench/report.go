package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentcli/agentcli/internal/benchdata"
)

// median returns the median of f over samples (the lower middle one for an
// even count, so that every figure is a measured one).
func median(ss []sample, f func(sample) float64) float64 {
	if len(ss) == 0 {
		return 0
	}
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

type figures struct {
	ok                  bool
	mbps, evps, evs     float64
	rssMB, ttfeMS, wall float64
}

func figuresOf(ss []sample, bytes int64) figures {
	if len(ss) == 0 {
		return figures{}
	}
	sec := func(s sample) float64 { return float64(s.WallNS) / 1e9 }
	return figures{
		ok:     true,
		mbps:   median(ss, func(s sample) float64 { return float64(bytes) / 1e6 / sec(s) }),
		evps:   median(ss, func(s sample) float64 { return float64(s.Events) / sec(s) }),
		evs:    median(ss, func(s sample) float64 { return float64(s.Events) }),
		rssMB:  median(ss, func(s sample) float64 { return float64(s.RSSKB) / 1024 }),
		ttfeMS: median(ss, func(s sample) float64 { return float64(s.TTFENS) / 1e6 }),
		wall:   median(ss, sec),
	}
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "—"
	}
	return fmt.Sprintf("**%.2f×**", a/b)
}

func num(v float64) string {
	switch {
	case v == 0:
		return "—"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func report(c config, scs []*scenario, samples map[key][]sample, contenders func(*scenario, benchdata.CLI) []contender, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## agentcli vs the official TypeScript SDKs\n\n")
	fmt.Fprintf(&b, "Machine: %s. Command: `%s`. Medians of %d interleaved round(s) (each contender in its own process, the order rotated every round); run took %s.\n\n",
		machine(), command(), c.rounds, took.Round(time.Second))
	fmt.Fprintf(&b, "Every contender reads the same bytes from the same fake CLI (`internal/bench/fakecli`, streams from `internal/benchdata`). "+
		"agentcli: `agentcli.Open` + `Stream`, every event yielded with its Raw line (up to the default Request.MaxRawBytes; `every Raw`: all of them, `DropRaw`: none). TS SDK: `query()` / `runStreamed()` on Node. "+
		"bare os/exec: start the fake and read its lines without parsing. fake | cat: the ceiling of any pipe reader. "+
		"Peak RSS: the contender process's VmHWM. Events are each side's own (agentcli events, SDK messages), so events/s ratios compare different units.\n\n")
	for si, sc := range scs {
		fmt.Fprintf(&b, "### %s\n\n", sc.name)
		switch {
		case sc.slow > 0:
			b.WriteString("| CLI | contender | peak RSS MB | events read |\n|---|---|---|---|\n")
		case sc.huge:
			b.WriteString("| CLI | contender | seconds | MB/s | peak RSS MB | peak RSS ÷ line |\n|---|---|---|---|---|---|\n")
		default:
			b.WriteString("| CLI | contender | MB/s | events/s | events | peak RSS MB | first event ms |\n|---|---|---|---|---|---|---|\n")
		}
		for _, cli := range c.clis {
			by := sc.bytes[cli]
			f := map[contender]figures{}
			for _, ct := range contenders(sc, cli) {
				f[ct] = figuresOf(samples[key{si, cli, ct}], by)
			}
			name := func(ct contender) string {
				switch ct {
				case cTS:
					return "`" + tsSDK(cli) + "`"
				case cFloor:
					return `fake \| cat`
				}
				return string(ct)
			}
			a, t, dr := f[cAgentcli], f[cTS], f[cDropRaw]
			switch {
			case sc.slow > 0:
				for _, ct := range []contender{cAgentcli, cTS} {
					if f[ct].ok {
						fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cli, name(ct), num(f[ct].rssMB), count(f[ct].evs))
					}
				}
				if t.ok {
					fmt.Fprintf(&b, "| %s | agentcli ÷ TS | %s | |\n", cli, ratio(a.rssMB, t.rssMB))
				}
			case sc.huge:
				line := float64(sc.size) / (1 << 20)
				for _, ct := range contenders(sc, cli) {
					if x := f[ct]; x.ok {
						rss := "—"
						if ct != cBare && ct != cFloor {
							rss = fmt.Sprintf("%.1f×", x.rssMB/line)
						}
						fmt.Fprintf(&b, "| %s | %s | %.3f | %s | %s | %s |\n", cli, name(ct), x.wall, num(x.mbps), ifRSS(ct, x.rssMB), rss)
					}
				}
				if t.ok {
					fmt.Fprintf(&b, "| %s | agentcli ÷ TS | %s | %s | %s | |\n", cli, ratio(a.wall, t.wall), ratio(a.mbps, t.mbps), ratio(a.rssMB, t.rssMB))
				}
				if t.ok && dr.ok {
					fmt.Fprintf(&b, "| %s | agentcli, DropRaw ÷ TS | %s | %s | %s | |\n", cli, ratio(dr.wall, t.wall), ratio(dr.mbps, t.mbps), ratio(dr.rssMB, t.rssMB))
				}
			default:
				for _, ct := range contenders(sc, cli) {
					if x := f[ct]; x.ok && ct != cBare && ct != cFloor {
						fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", cli, name(ct), num(x.mbps), num(x.evps), count(x.evs), num(x.rssMB), num(x.ttfeMS))
					}
				}
				for _, ct := range variantContenders(c) {
					for _, v := range []contender{ct, ct + dropRawSuffix} {
						if x := f[v]; x.ok && t.ok {
							fmt.Fprintf(&b, "| %s | %s ÷ TS | %s | %s | | %s | %s |\n", cli, v, ratio(x.mbps, t.mbps), ratio(x.evps, t.evps), ratio(x.rssMB, t.rssMB), ratio(x.ttfeMS, t.ttfeMS))
						}
					}
				}
				if t.ok {
					fmt.Fprintf(&b, "| %s | agentcli ÷ TS | %s | %s | | %s | %s |\n", cli, ratio(a.mbps, t.mbps), ratio(a.evps, t.evps), ratio(a.rssMB, t.rssMB), ratio(a.ttfeMS, t.ttfeMS))
				}
				if t.ok && dr.ok {
					fmt.Fprintf(&b, "| %s | agentcli, DropRaw ÷ TS | %s | %s | | %s | %s |\n", cli, ratio(dr.mbps, t.mbps), ratio(dr.evps, t.evps), ratio(dr.rssMB, t.rssMB), ratio(dr.ttfeMS, t.ttfeMS))
				}
				if x := f[cBare]; x.ok {
					fmt.Fprintf(&b, "| %s | bare os/exec (lines, no parsing) | %s | %s | %s | %s | %s |\n", cli, num(x.mbps), num(x.evps), count(x.evs), num(x.rssMB), num(x.ttfeMS))
					fmt.Fprintf(&b, "| %s | agentcli − bare, first event | | | | | %+.2f ms |\n", cli, a.ttfeMS-x.ttfeMS)
				}
				if x := f[cFloor]; x.ok {
					fmt.Fprintf(&b, "| %s | fake \\| cat | %s | | | | |\n", cli, num(x.mbps))
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// count formats an event count.
func count(v float64) string { return fmt.Sprintf("%.0f", v) }

func ifRSS(ct contender, v float64) string {
	if ct == cFloor {
		return "—"
	}
	return num(v)
}

func command() string {
	args := strings.Join(os.Args[1:], " ")
	return strings.TrimSpace("scripts/bench.sh " + stripNode(args))
}

// stripNode drops the -node and -o flags bench.sh adds.
func stripNode(args string) string {
	var out []string
	f := strings.Fields(args)
	for i := 0; i < len(f); i++ {
		if f[i] == "-node" || f[i] == "-o" || f[i] == "-work" {
			i++
			continue
		}
		if strings.HasPrefix(f[i], "-node=") || strings.HasPrefix(f[i], "-o=") || strings.HasPrefix(f[i], "-work=") {
			continue
		}
		out = append(out, f[i])
	}
	return strings.Join(out, " ")
}

func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	load, _ := os.ReadFile("/proc/loadavg")
	nodeV := "no node"
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		nodeV = "Node " + strings.TrimSpace(string(out))
	}
	la := strings.Fields(string(load))
	if len(la) > 3 {
		la = la[:3]
	}
	return fmt.Sprintf("%d × %s, Linux %s, %s, %s, load average %s at the end",
		runtime.NumCPU(), cpu, strings.TrimSpace(string(kernel)), runtime.Version(), nodeV, strings.Join(la, " "))
}
