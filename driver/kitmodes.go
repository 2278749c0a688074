package driver

import (
	"bytes"
	"slices"
	"unicode/utf8"

	"github.com/agentcli/agentcli"
	"github.com/agentcli/agentcli/internal/kitmodes"
	"github.com/agentcli/agentcli/internal/proc"
)

// The module's test kits run a parser in each way the reader hands lines
// over (internal/backendtest, through internal/kitmodes), without a
// process: the fast paths of every backend's parser are checked against
// parsing line by line.
func init() {
	kitmodes.Lines = parseInMode
	kitmodes.OwnedLine = parseOwnedLine
}

// parseInMode implements kitmodes.Lines.
func parseInMode(p any, lines [][]byte, m kitmodes.Mode) ([][]agentcli.Event, bool) {
	fp, ok := p.(fastParser)
	if !ok {
		return nil, false
	}
	if m.Borrow {
		fp.borrowLines()
	}
	decs := [2]func(*readLine){fp.decoder(), fp.decoder()}
	var batch [4]readLine // recycled, decoded values and all, as the reader's are
	var out [][]agentcli.Event
	var mem []byte
	for i := 0; i < len(lines); i += len(batch) {
		group := lines[i:min(i+len(batch), len(lines))]
		n := 0
		for _, l := range group {
			n += len(l)
		}
		mem = slices.Grow(mem[:0], n) // no line moves as others follow
		for j, l := range group {
			e := &batch[j]
			e.Line, e.owned, e.decoded = proc.Line{Data: l}, false, false
			switch {
			case m.Borrow && m.Own != nil && m.Own(i+j), !m.Borrow && m.OwnOver >= 0 && longerThan(l, m.OwnOver):
				e.Data, e.owned = bytes.Clone(l), true // strings may be decoded in place in it
			case m.Borrow:
				mem = append(mem, l...)
				e.Data = mem[len(mem)-len(l) : len(mem) : len(mem)]
			}
			e.utf8 = m.UTF8 && utf8.Valid(e.Data)
			if m.Decoders && (m.Direct == nil || !m.Direct(i+j)) {
				decs[j%2](e)
			}
		}
		for j := range group {
			out = append(out, slices.Clone(fp.read(&batch[j])))
		}
		for j := range mem {
			mem[j] = 'X' // the reader reuses the memory
		}
	}
	return out, true
}

// parseOwnedLine implements kitmodes.OwnedLine.
func parseOwnedLine(p any, line []byte, borrow, decoder bool) []agentcli.Event {
	fp := p.(fastParser)
	if borrow {
		fp.borrowLines()
	}
	l := &readLine{Line: proc.Line{Data: line}, utf8: true, owned: true}
	if decoder {
		fp.decoder()(l)
	}
	return fp.read(l)
}
