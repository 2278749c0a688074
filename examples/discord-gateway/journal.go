package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Journal records the messages the gateway has taken and not yet answered,
// so that a gateway that died (kill -9, a crash, the OOM killer) can tell,
// once restarted, which messages it owes an answer: those still waiting
// are queued again, those that were being answered are answered with a
// request to send them again (their run was cut short, and running them
// again unasked could repeat what their tool calls did).
type Journal interface {
	// Queued records m as waiting.
	Queued(m Message) error
	// Running records that m is being answered in channel, where its
	// placeholder (if any yet) is the message placeholder.
	Running(m Message, channel, placeholder string) error
	// Done forgets m.
	Done(m Message) error
	// Pending returns what a previous run left, oldest first.
	Pending() ([]JournalEntry, error)
}

// JournalEntry is one message of the journal.
type JournalEntry struct {
	Message Message `json:"message"`
	// Running reports that the message was being answered.
	Running bool `json:"running,omitempty"`
	// Channel is where its answer goes, Placeholder the message that
	// shows it, once posted.
	Channel     string `json:"reply_channel,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
}

// FileJournal is a Journal of one small file per message in a directory.
// Files are replaced atomically but not synced: the journal survives a
// crash of the gateway, not one of the machine.
type FileJournal struct {
	dir string
}

// NewFileJournal opens (creating it if needed) a FileJournal in dir.
func NewFileJournal(dir string) (*FileJournal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	stale, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	for _, f := range stale {
		os.Remove(f)
	}
	return &FileJournal{dir: dir}, nil
}

func (j *FileJournal) path(id string) string {
	if plainName.MatchString(id) {
		return filepath.Join(j.dir, "m-"+id+".json")
	}
	h := sha256.Sum256([]byte(id))
	return filepath.Join(j.dir, "h-"+hex.EncodeToString(h[:20])+".json")
}

func (j *FileJournal) write(e JournalEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeAtomic(j.path(e.Message.ID), b, false)
}

// Queued implements Journal.
func (j *FileJournal) Queued(m Message) error { return j.write(JournalEntry{Message: m}) }

// Running implements Journal.
func (j *FileJournal) Running(m Message, channel, placeholder string) error {
	return j.write(JournalEntry{Message: m, Running: true, Channel: channel, Placeholder: placeholder})
}

// Done implements Journal.
func (j *FileJournal) Done(m Message) error {
	err := os.Remove(j.path(m.ID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Pending implements Journal. A file that cannot be read is removed and
// reported in the error; the others are returned.
func (j *FileJournal) Pending() ([]JournalEntry, error) {
	names, err := filepath.Glob(filepath.Join(j.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []JournalEntry
	var bad []string
	for _, n := range names {
		b, err := os.ReadFile(n)
		var e JournalEntry
		if err == nil {
			err = json.Unmarshal(b, &e)
		}
		if err != nil || e.Message.ID == "" || j.path(e.Message.ID) != n {
			bad = append(bad, filepath.Base(n))
			os.Remove(n)
			continue
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b JournalEntry) int {
		return cmp.Or(cmp.Compare(a.Message.Seq, b.Message.Seq), strings.Compare(a.Message.ID, b.Message.ID))
	})
	if len(bad) > 0 {
		return out, fmt.Errorf("journal: %d unreadable entries removed: %s", len(bad), strings.Join(bad, ", "))
	}
	return out, nil
}
