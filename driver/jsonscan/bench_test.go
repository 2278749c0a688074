package jsonscan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/agentcli/agentcli/internal/benchdata"
)

// The benchmarks decode, line by line, what each backend's parser needs
// from its CLI's lines, once with jsonscan and once with encoding/json
// Unmarshal into structs of the same shape:
//
//	go test -run '^$' -bench . -benchmem ./driver/jsonscan/
//
// Besides MB/s (wall clock) they report cpu-MB/s, on the benchmark
// thread's CPU time, which a busy shared machine disturbs far less.
//
// Inputs: the synthetic mixes of internal/benchdata (2 MiB each) and the
// real transcripts under <cli>/testdata/real.

// --- claude ---

type claudeBlock struct {
	Type, Text, Thinking, ID, Name, ToolUseID, Output string
	Input                                             []byte
	IsError                                           bool
}

// Discriminators (type, subtype, ...) are read as views (StrBytes): they
// are compared, never kept, so they cost no allocation. So is the session
// id, which repeats on every line: a parser keeps its string once.
type claudeLine struct {
	Type, Subtype, EventType, DeltaType, SessionID []byte
	Parent, Model, Result                          string
	Delta                                          string
	Blocks                                         []claudeBlock
	IsError                                        bool
	In, Out, CacheRead, CacheWrite                 int64
	Cost                                           float64
}

func scanClaude(d *Decoder, l *claudeLine) {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			l.Type, _ = d.StrBytes()
		case "subtype":
			l.Subtype, _ = d.StrBytes()
		case "session_id":
			l.SessionID, _ = d.StrBytes()
		case "parent_tool_use_id":
			l.Parent = d.Str()
		case "result":
			l.Result = d.Str()
		case "is_error":
			l.IsError = d.Bool()
		case "total_cost_usd":
			l.Cost = d.Float()
		case "usage":
			for k := range d.Object() {
				switch string(k) {
				case "input_tokens":
					l.In = d.Int()
				case "output_tokens":
					l.Out = d.Int()
				case "cache_read_input_tokens":
					l.CacheRead = d.Int()
				case "cache_creation_input_tokens":
					l.CacheWrite = d.Int()
				}
			}
		case "message":
			for k := range d.Object() {
				switch string(k) {
				case "model":
					l.Model = d.Str()
				case "content":
					l.Blocks = scanClaudeContent(d, l.Blocks[:0])
				}
			}
		case "event":
			for k := range d.Object() {
				switch string(k) {
				case "type":
					l.EventType, _ = d.StrBytes()
				case "delta":
					for k := range d.Object() {
						switch string(k) {
						case "type":
							l.DeltaType, _ = d.StrBytes()
						case "text", "thinking":
							l.Delta = d.Str()
						}
					}
				}
			}
		}
	}
}

func scanClaudeContent(d *Decoder, blocks []claudeBlock) []claudeBlock {
	if d.Kind() == String {
		return append(blocks, claudeBlock{Type: "text", Text: d.Str()})
	}
	for range d.Array() {
		var b claudeBlock
		for k := range d.Object() {
			switch string(k) {
			case "type":
				b.Type = d.Str()
			case "text":
				b.Text = d.Str()
			case "thinking":
				b.Thinking = d.Str()
			case "id":
				b.ID = d.Str()
			case "name":
				b.Name = d.Str()
			case "input":
				b.Input = d.Raw()
			case "tool_use_id":
				b.ToolUseID = d.Str()
			case "is_error":
				b.IsError = d.Bool()
			case "content":
				if d.Kind() == String {
					b.Output = d.Str()
					break
				}
				var sb strings.Builder
				for _, c := range scanClaudeContent(d, nil) {
					sb.WriteString(c.Text)
				}
				b.Output = sb.String()
			}
		}
		blocks = append(blocks, b)
	}
	return blocks
}

type stdClaudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type stdClaudeLine struct {
	Type      string  `json:"type"`
	Subtype   string  `json:"subtype"`
	SessionID string  `json:"session_id"`
	Parent    *string `json:"parent_tool_use_id"`
	Result    string  `json:"result"`
	IsError   bool    `json:"is_error"`
	Cost      float64 `json:"total_cost_usd"`
	Usage     *struct {
		In         int64 `json:"input_tokens"`
		Out        int64 `json:"output_tokens"`
		CacheRead  int64 `json:"cache_read_input_tokens"`
		CacheWrite int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	Message *struct {
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"` // a string or blocks
	} `json:"message"`
	Event *struct {
		Type  string `json:"type"`
		Delta *struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"delta"`
	} `json:"event"`
}

func stdClaude(line []byte) {
	var w stdClaudeLine
	if json.Unmarshal(line, &w) != nil || w.Message == nil || len(w.Message.Content) == 0 {
		return
	}
	var blocks []stdClaudeBlock
	if w.Message.Content[0] == '"' {
		var s string
		json.Unmarshal(w.Message.Content, &s)
		return
	}
	json.Unmarshal(w.Message.Content, &blocks)
	for _, b := range blocks {
		if len(b.Content) > 0 && b.Content[0] == '"' {
			var s string
			json.Unmarshal(b.Content, &s)
		}
	}
}

// --- codex ---

type codexLine struct {
	Type, ItemType, Status                        []byte
	ThreadID, Message, ErrMessage                 string
	In, Cached, CacheWrite, Out, Reasoning        int64
	ID, Text, Command, Output                     string
	ExitCode                                      int64
	HasExit                                       bool
	Server, Tool                                  string
	Arguments, MCPContent, Structured, ChangesRaw []byte
}

func scanCodex(d *Decoder, l *codexLine) {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			l.Type, _ = d.StrBytes()
		case "thread_id":
			l.ThreadID = d.Str()
		case "message":
			l.Message = d.Str()
		case "error":
			for k := range d.Object() {
				if string(k) == "message" {
					l.ErrMessage = d.Str()
				}
			}
		case "usage":
			for k := range d.Object() {
				switch string(k) {
				case "input_tokens":
					l.In = d.Int()
				case "cached_input_tokens":
					l.Cached = d.Int()
				case "cache_write_input_tokens":
					l.CacheWrite = d.Int()
				case "output_tokens":
					l.Out = d.Int()
				case "reasoning_output_tokens":
					l.Reasoning = d.Int()
				}
			}
		case "item":
			first := true
			for k := range d.Object() {
				switch string(k) {
				case "id":
					if id := d.Str(); first { // web_search repeats "id": the first is the item's
						l.ID, first = id, false
					}
				case "type":
					l.ItemType, _ = d.StrBytes()
				case "text":
					l.Text = d.Str()
				case "message":
					l.Message = d.Str()
				case "command":
					l.Command = d.Str()
				case "aggregated_output":
					l.Output = d.Str()
				case "exit_code":
					l.ExitCode, l.HasExit = d.IntOK()
				case "status":
					l.Status, _ = d.StrBytes()
				case "server":
					l.Server = d.Str()
				case "tool":
					l.Tool = d.Str()
				case "arguments":
					l.Arguments = d.Raw()
				case "changes":
					l.ChangesRaw = d.Raw()
				case "result":
					for k := range d.Object() {
						switch string(k) {
						case "content":
							l.MCPContent = d.Raw()
						case "structured_content":
							l.Structured = d.Raw()
						}
					}
				}
			}
		}
	}
}

type stdCodexLine struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		In         int64 `json:"input_tokens"`
		Cached     int64 `json:"cached_input_tokens"`
		CacheWrite int64 `json:"cache_write_input_tokens"`
		Out        int64 `json:"output_tokens"`
		Reasoning  int64 `json:"reasoning_output_tokens"`
	} `json:"usage"`
	Item *struct {
		ID               string          `json:"id"`
		Type             string          `json:"type"`
		Text             string          `json:"text"`
		Message          string          `json:"message"`
		Command          string          `json:"command"`
		AggregatedOutput string          `json:"aggregated_output"`
		ExitCode         *int64          `json:"exit_code"`
		Status           string          `json:"status"`
		Server           string          `json:"server"`
		Tool             string          `json:"tool"`
		Arguments        json.RawMessage `json:"arguments"`
		Changes          json.RawMessage `json:"changes"`
		Result           *struct {
			Content    json.RawMessage `json:"content"`
			Structured json.RawMessage `json:"structured_content"`
		} `json:"result"`
	} `json:"item"`
}

func stdCodex(line []byte) {
	var w stdCodexLine
	json.Unmarshal(line, &w)
}

// --- gemini ---

type geminiLine struct {
	Type, Role, Status, SessionID                        []byte
	Model, Content, ToolName, ToolID, Output, ErrMessage string
	Delta                                                bool
	Parameters                                           []byte
	Total, In, Out, Cached                               int64
}

func scanGemini(d *Decoder, l *geminiLine) {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			l.Type, _ = d.StrBytes()
		case "session_id":
			l.SessionID, _ = d.StrBytes()
		case "model":
			l.Model = d.Str()
		case "role":
			l.Role, _ = d.StrBytes()
		case "content":
			l.Content = d.Str()
		case "delta":
			l.Delta = d.Bool()
		case "tool_name":
			l.ToolName = d.Str()
		case "tool_id":
			l.ToolID = d.Str()
		case "parameters":
			l.Parameters = d.Raw()
		case "status":
			l.Status, _ = d.StrBytes()
		case "output":
			l.Output = d.Str()
		case "error":
			for k := range d.Object() {
				if string(k) == "message" {
					l.ErrMessage = d.Str()
				}
			}
		case "stats":
			for k := range d.Object() {
				switch string(k) {
				case "total_tokens":
					l.Total = d.Int()
				case "input_tokens":
					l.In = d.Int()
				case "output_tokens":
					l.Out = d.Int()
				case "cached":
					l.Cached = d.Int()
				}
			}
		}
	}
}

type stdGeminiLine struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     *string         `json:"output"`
	Error      *struct {
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		Total  int64 `json:"total_tokens"`
		In     int64 `json:"input_tokens"`
		Out    int64 `json:"output_tokens"`
		Cached int64 `json:"cached"`
	} `json:"stats"`
}

func stdGemini(line []byte) {
	var w stdGeminiLine
	json.Unmarshal(line, &w)
}

// --- opencode ---

type opencodeLine struct {
	Type, SessionID, PartType, Status, MessageID, ID []byte
	Text, CallID, Tool, Reason                       string
	Synthetic                                        bool
	Input, Output, Err, Exit, Cost, Error            []byte
	In, Out, Reasoning, CacheRead, CacheWrite        float64
}

func scanOpencode(d *Decoder, l *opencodeLine) {
	for k := range d.Object() {
		switch string(k) {
		case "type":
			l.Type, _ = d.StrBytes()
		case "sessionID":
			l.SessionID, _ = d.StrBytes()
		case "error":
			l.Error = d.Raw()
		case "part":
			for k := range d.Object() {
				switch string(k) {
				case "type":
					l.PartType, _ = d.StrBytes()
				case "id":
					l.ID, _ = d.StrBytes()
				case "messageID":
					l.MessageID, _ = d.StrBytes()
				case "text":
					l.Text = d.Str()
				case "synthetic":
					l.Synthetic = d.Bool()
				case "callID":
					l.CallID = d.Str()
				case "tool":
					l.Tool = d.Str()
				case "reason":
					l.Reason = d.Str()
				case "cost":
					l.Cost = d.Raw()
				case "state":
					for k := range d.Object() {
						switch string(k) {
						case "status":
							l.Status, _ = d.StrBytes()
						case "input":
							l.Input = d.Raw()
						case "output":
							l.Output = d.Raw()
						case "error":
							l.Err = d.Raw()
						case "metadata":
							for k := range d.Object() {
								if string(k) == "exit" {
									l.Exit = d.Raw()
								}
							}
						}
					}
				case "tokens":
					for k := range d.Object() {
						switch string(k) {
						case "input":
							l.In = d.Float()
						case "output":
							l.Out = d.Float()
						case "reasoning":
							l.Reasoning = d.Float()
						case "cache":
							for k := range d.Object() {
								switch string(k) {
								case "read":
									l.CacheRead = d.Float()
								case "write":
									l.CacheWrite = d.Float()
								}
							}
						}
					}
				}
			}
		}
	}
}

type stdOpencodeLine struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionID"`
	Error     json.RawMessage `json:"error"`
	Part      *struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		MessageID string `json:"messageID"`
		Text      string `json:"text"`
		Synthetic bool   `json:"synthetic"`
		CallID    string `json:"callID"`
		Tool      string `json:"tool"`
		Reason    string `json:"reason"`
		State     *struct {
			Status   string          `json:"status"`
			Input    json.RawMessage `json:"input"`
			Output   json.RawMessage `json:"output"`
			Error    json.RawMessage `json:"error"`
			Metadata *struct {
				Exit json.RawMessage `json:"exit"`
			} `json:"metadata"`
		} `json:"state"`
		Cost   json.RawMessage `json:"cost"`
		Tokens *struct {
			In        float64 `json:"input"`
			Out       float64 `json:"output"`
			Reasoning float64 `json:"reasoning"`
			Cache     struct {
				Read  float64 `json:"read"`
				Write float64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
	} `json:"part"`
}

func stdOpencode(line []byte) {
	var w stdOpencodeLine
	json.Unmarshal(line, &w)
}

// --- benchmarks ---

type shape struct {
	cli  benchdata.CLI
	scan func(d *Decoder, line []byte)
	std  func(line []byte)
}

var shapes = []shape{
	{benchdata.Claude, func(d *Decoder, line []byte) { var l claudeLine; d.Reset(line); scanClaude(d, &l) }, stdClaude},
	{benchdata.Codex, func(d *Decoder, line []byte) { var l codexLine; d.Reset(line); scanCodex(d, &l) }, stdCodex},
	{benchdata.Gemini, func(d *Decoder, line []byte) { var l geminiLine; d.Reset(line); scanGemini(d, &l) }, stdGemini},
	{benchdata.OpenCode, func(d *Decoder, line []byte) { var l opencodeLine; d.Reset(line); scanOpencode(d, &l) }, stdOpencode},
}

func benchLines(b *testing.B, lines [][]byte, s shape) {
	size := benchdata.Size(lines)
	run := func(name string, each func(d *Decoder, line []byte)) {
		b.Run(name, func(b *testing.B) {
			var d Decoder
			b.SetBytes(size)
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu := threadCPU()
			for b.Loop() {
				for _, l := range lines {
					each(&d, l)
				}
			}
			if cpu := threadCPU() - cpu; cpu > 0 {
				b.ReportMetric(float64(size)*float64(b.N)/float64(cpu)*1e3, "cpu-MB/s")
			}
		})
	}
	run("jsonscan", s.scan)
	run("skip", func(d *Decoder, l []byte) { // the floor: find the end of every line
		d.Reset(l)
		d.Skip()
	})
	run("encoding-json", func(_ *Decoder, l []byte) { s.std(l) })
}

// BenchmarkSynthetic decodes 2 MiB of each CLI's synthetic event mix.
func BenchmarkSynthetic(b *testing.B) {
	for _, s := range shapes {
		b.Run(string(s.cli), func(b *testing.B) {
			benchLines(b, benchdata.Lines(s.cli, 2<<20), s)
		})
	}
}

// escapedStrings returns the strings with escapes of 4 MiB of cli's
// synthetic event mix as the fake CLI prints them, each a JSON document of
// its own.
func escapedStrings(cli benchdata.CLI) (docs [][]byte, size int64) {
	var d Decoder
	for _, l := range benchdata.Lines(cli, 4<<20) {
		d.Reset(l)
		walkStrings(&d, func() {
			if s := d.Raw(); bytes.IndexByte(s, '\\') >= 0 {
				docs = append(docs, s)
				size += int64(len(s))
			}
		})
	}
	return docs, size
}

// BenchmarkEscapedStrings decodes the strings with escapes of each CLI's
// synthetic mix with Str (into new memory, their UTF-8 checked), the
// decoder's hottest path on codex's output.
func BenchmarkEscapedStrings(b *testing.B) {
	for _, s := range shapes {
		b.Run(string(s.cli), func(b *testing.B) {
			docs, size := escapedStrings(s.cli)
			var d Decoder
			b.SetBytes(size)
			for b.Loop() {
				for _, doc := range docs {
					d.Reset(doc)
					if _, ok := d.StrOK(); !ok {
						b.Fatalf("%q: %v", doc, d.Finish())
					}
				}
			}
		})
	}
}

// BenchmarkReal decodes every line of each CLI's real transcripts.
func BenchmarkReal(b *testing.B) {
	for _, s := range shapes {
		b.Run(string(s.cli), func(b *testing.B) {
			lines, err := benchdata.ReadLines(fmt.Sprintf("../../%s/testdata/real/*.stdout", s.cli))
			if err != nil {
				b.Fatal(err)
			}
			benchLines(b, lines, s)
		})
	}
}

// walk reads every value, descending into containers, without keeping
// anything.
func walk(d *Decoder) {
	walkStrings(d, func() { d.StrBytes() })
}

// walkStrings reads every value, descending into containers, and calls
// str to read each string.
func walkStrings(d *Decoder, str func()) {
	switch d.Kind() {
	case Object:
		for range d.Object() {
			walkStrings(d, str)
		}
	case Array:
		for range d.Array() {
			walkStrings(d, str)
		}
	case String:
		str()
	default:
		d.Skip()
	}
}

// BenchmarkLinear reports ns/byte for pathological inputs at size n and
// 2n: equal figures mean linear time.
func BenchmarkLinear(b *testing.B) {
	inputs := []struct {
		name string
		make func(n int) []byte
		read func(d *Decoder)
	}{
		{"nested-arrays-skip", func(n int) []byte {
			return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		}, func(d *Decoder) { d.Skip() }},
		{"nested-objects-read", func(n int) []byte {
			return []byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n))
		}, walk},
		{"escaped-quotes-string", func(n int) []byte {
			return []byte(`"` + strings.Repeat(`\"\\`, n) + `"`)
		}, func(d *Decoder) { d.Str() }},
		{"escaped-quotes-skip", func(n int) []byte {
			return []byte(`"` + strings.Repeat(`\"\\`, n) + `"`)
		}, func(d *Decoder) { d.Skip() }},
		{"backslash-runs-skip", func(n int) []byte {
			return []byte(`"` + strings.Repeat(strings.Repeat(`\\`, 50)+`\"`, n/51) + `"`)
		}, func(d *Decoder) { d.Skip() }},
		{"many-members-read", func(n int) []byte {
			return []byte(`{` + strings.Repeat(`"k":1,`, n) + `"z":2}`)
		}, func(d *Decoder) {
			for range d.Object() {
			}
		}},
		{"surrogates-string", func(n int) []byte {
			return []byte(`"` + strings.Repeat(`\ud83d\ude00\ud800`, n) + `"`)
		}, func(d *Decoder) { d.Str() }},
	}
	for _, in := range inputs {
		for _, n := range []int{MaxDepth / 2, MaxDepth, 100_000, 200_000} {
			if strings.HasPrefix(in.name, "nested") && n > MaxDepth {
				continue
			}
			doc := in.make(n)
			b.Run(fmt.Sprintf("%s/n=%d", in.name, n), func(b *testing.B) {
				var d Decoder
				b.SetBytes(int64(len(doc)))
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu := threadCPU()
				for b.Loop() {
					d.Reset(doc)
					in.read(&d)
				}
				cpu = threadCPU() - cpu
				if err := d.Finish(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(doc)), "ns/byte")
				if cpu > 0 {
					b.ReportMetric(float64(cpu)/float64(b.N)/float64(len(doc)), "cpu-ns/byte")
				}
			})
		}
	}
}
