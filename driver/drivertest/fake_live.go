package drivertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
)

// isLive reports whether the script at path plays a live session.
func isLive(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	return string(bytes.TrimSpace(first)) == "live"
}

// liveMsg is what the fake keeps of a message it read.
type liveMsg struct {
	id  string // "id", as sent (JSON)
	rid string // "request_id"
}

func parseMsg(line []byte) liveMsg {
	var m struct {
		ID  json.RawMessage `json:"id"`
		RID string          `json:"request_id"`
	}
	json.Unmarshal(line, &m) //nolint:errcheck // a line that is not JSON has no ids
	return liveMsg{id: string(m.ID), rid: m.RID}
}

// playLive plays a live script (see the package comment).
func playLive(path string, rec *Record) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	var stdin strings.Builder
	readLine := func() ([]byte, bool) {
		l, err := in.ReadBytes('\n')
		stdin.Write(l)
		if err != nil && len(l) == 0 {
			return nil, false
		}
		return l, true
	}
	// record writes what was read so far.
	record := func() {
		rec.Stdin = stdin.String()
		writeRecord(rec)
	}
	defer record()
	var last liveMsg
	saved := map[string]liveMsg{}
	subst := func(s string) string {
		for name, m := range saved {
			s = strings.ReplaceAll(s, "$ID:"+name, m.id)
		}
		s = strings.ReplaceAll(s, "$ID", last.id)
		return strings.ReplaceAll(s, "$RID", last.rid)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	sc.Scan() // "live"
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "expect":
			for {
				l, ok := readLine()
				if !ok {
					return 0
				}
				if bytes.Contains(l, []byte(arg)) {
					last = parseMsg(l)
					break
				}
			}
			record()
		case "expectn":
			ns, text, _ := strings.Cut(arg, " ")
			n, _ := strconv.Atoi(ns)
			for got := 0; got < n; {
				l, ok := readLine()
				if !ok {
					return 0
				}
				if bytes.Contains(l, []byte(text)) {
					got++
				}
			}
			record()
		case "save":
			saved[arg] = last
		case "reply", "out":
			out.WriteString(subst(arg) + "\n")
			out.Flush()
		case "repeatn":
			ns, text, _ := strings.Cut(arg, " ")
			n, _ := strconv.Atoi(ns)
			for i := 1; i <= n; i++ {
				out.WriteString(strings.ReplaceAll(subst(text), "$N", strconv.Itoa(i)) + "\n")
			}
			out.Flush()
		case "deaf":
			in = nil
		case "drain":
			out.Flush()
			for {
				if _, ok := readLine(); !ok {
					return 0
				}
			}
		default:
			if code, end := scriptCommand(cmd, arg, out, "live script"); end {
				return code
			}
		}
	}
	// The script is over: the session ends when stdin does.
	out.Flush()
	for in != nil {
		if _, ok := readLine(); !ok {
			break
		}
	}
	return 0
}
