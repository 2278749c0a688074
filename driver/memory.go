package driver

import (
	"math"

	"github.com/agentcli/agentcli"
)

// memory is how a run's output is read into memory and handed to its
// parser: the kit's memory policy, decided here for every run.
type memory struct {
	// borrow: lines are read into memory that is reused once their
	// events are handled (Request.DropRaw, for a parser made by Lines).
	borrow bool
	// ownOver: when not borrowing, a line longer than this (trimmed) is
	// handed over for keeps; math.MaxInt for none.
	ownOver int
	// decoders is how many goroutines decode lines ahead.
	decoders int
}

// memoryOf returns the memory policy of a run of req whose parser Lines
// made (fast) or not.
func memoryOf(req *agentcli.Request, fast bool) memory {
	if !fast {
		// A Parser of the backend's own keeps what it likes of each line,
		// read on the run's goroutine.
		return memory{ownOver: math.MaxInt}
	}
	m := memory{borrow: req.DropRaw, ownOver: math.MaxInt}
	if !m.borrow {
		// The events of a line longer than the Raw the run keeps keep no
		// Raw of it: nothing else reads its memory.
		m.ownOver = RawLimit(req)
	}
	m.decoders = decoders()
	return m
}

// decoder returns the factory of the run's decoders, or nil when its
// lines are not decoded ahead.
func (f *feed) decoder() func() func(*readLine) {
	if f.fast == nil || f.mem.decoders == 0 {
		return nil
	}
	return f.fast.decoder
}
