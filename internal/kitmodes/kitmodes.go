// Package kitmodes lets the module's test kits (internal/backendtest) run
// a parser in each way the driver kit hands lines to it, which package
// driver keeps unexported: driver sets the functions here when it is
// initialised. Nothing else uses it.
package kitmodes

import "github.com/agentcli/agentcli"

// Mode is one way of handing a run's lines to a parser that driver.Lines
// made.
type Mode struct {
	// Borrow: the run keeps no Raw (Request.DropRaw): lines are read
	// into memory that is overwritten once their events are collected,
	// except the lines i with Own(i), which are handed over for keeps in
	// memory of their own.
	Borrow bool
	Own    func(i int) bool
	// OwnOver: not borrowing, the lines longer than OwnOver, trimmed,
	// are handed over for keeps (a run keeping Raw of at most OwnOver
	// bytes); a negative OwnOver means none.
	OwnOver int
	// Decoders: lines are decoded ahead, four at a time alternately by
	// two decoders (as on other goroutines), then applied in order;
	// lines i with Direct(i) are decoded when they are applied instead.
	Decoders bool
	Direct   func(i int) bool
	// UTF8: the lines are checked for valid UTF-8 ahead.
	UTF8 bool
}

// Lines parses lines with p, a driver.Parser made by driver.Lines, as a
// run hands them over in mode m, and returns the events of each line
// (copies). ok is false for a Parser that driver.Lines did not make.
var Lines func(p any, lines [][]byte, m Mode) (events [][]agentcli.Event, ok bool)

// OwnedLine parses line, handed over for keeps, with p (made by
// driver.Lines): borrowing (the run keeps no Raw) or not, decoded by a
// decoder or on the run's goroutine. It returns the events (not copies).
var OwnedLine func(p any, line []byte, borrow, decoder bool) []agentcli.Event
