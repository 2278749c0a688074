package benchdata

import (
	"fmt"
	"math/rand/v2"
)

// outputSize draws a tool output size, log-uniform from 64 B to 32 KiB:
// most outputs are small, a few are large.
func outputSize(r *rand.Rand) int {
	return 64 << r.IntN(10) >> r.IntN(2)
}

// --- claude: stream-json with --verbose --include-partial-messages ---

const claudeSession = "5652e735-7a09-451f-b133-853edf0c2f44"

func claudeHeader() []byte { return []byte(claudeInitLine + "\n") }
func claudeResult() []byte { return []byte(claudeResultLine + "\n") }

// claudeEvent writes one stream_event line around event (a JSON object).
func claudeEvent(w *writer, r *rand.Rand, msg, event string) {
	w.f(`{"type":"stream_event","event":%s,"session_id":"%s","parent_tool_use_id":null,"uuid":"%s","api_message_id":"%s"}`, event, claudeSession, uuid(r), msg)
}

func claudeAssistant(w *writer, r *rand.Rand, msg, block string) {
	w.f(`{"type":"assistant","message":{"content":[%s],"id":"%s","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":1520,"input_tokens":10,"output_tokens":1},"context_management":null},"parent_tool_use_id":null,"session_id":"%s","uuid":"%s","timestamp":"2026-11-22T00:10:55.227Z"}`, block, msg, claudeSession, uuid(r))
}

func claudeToolResult(w *writer, id, out string, isErr bool) {
	q := w.q(out)
	w.f(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"%s","type":"tool_result","content":%s,"is_error":%t}]},"parent_tool_use_id":null,"session_id":"%s","uuid":"fc96b5f8-257f-4fae-b0b3-b6e25265943d","timestamp":"2026-11-22T00:10:55.196Z","tool_use_result":{"stdout":%s,"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"tool_result_meta":[{"id":"%s","permission_decision":{"decision":"accept","source":"config","reason_type":"mode"}}]}`, id, q, isErr, claudeSession, q, id)
}

func claudeTurn(w *writer, r *rand.Rand, i int) {
	msg := fmt.Sprintf("msg_bench_%d", i)
	w.f(`{"type":"system","subtype":"status","status":"requesting","session_id":"%s","uuid":"%s"}`, claudeSession, uuid(r))
	claudeEvent(w, r, msg, fmt.Sprintf(`{"message":{"content":[],"id":"%s","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":1520,"input_tokens":10,"output_tokens":1}},"type":"message_start"}`, msg))
	idx := 0
	if i%2 == 0 { // thinking
		thinking := prose(r, 200+r.IntN(800))
		claudeEvent(w, r, msg, fmt.Sprintf(`{"content_block":{"signature":"","thinking":"","type":"thinking"},"index":%d,"type":"content_block_start"}`, idx))
		est := 0
		for _, p := range pieces(thinking, 2+len(thinking)/80) {
			est += 4
			w.f(`{"type":"system","subtype":"thinking_tokens","estimated_tokens":%d,"estimated_tokens_delta":4,"session_id":"%s","uuid":"%s"}`, est, claudeSession, uuid(r))
			claudeEvent(w, r, msg, fmt.Sprintf(`{"delta":{"thinking":%s,"type":"thinking_delta"},"index":%d,"type":"content_block_delta"}`, w.q(p), idx))
		}
		sig := fmt.Sprintf("EqQBCkgIBxABGAIiQL%x", r.Uint64())
		claudeEvent(w, r, msg, fmt.Sprintf(`{"delta":{"signature":"%s","type":"signature_delta"},"index":%d,"type":"content_block_delta"}`, sig, idx))
		claudeAssistant(w, r, msg, fmt.Sprintf(`{"signature":"%s","thinking":%s,"type":"thinking"}`, sig, w.q(thinking)))
		claudeEvent(w, r, msg, fmt.Sprintf(`{"index":%d,"type":"content_block_stop"}`, idx))
		idx++
	}
	text := prose(r, 200+r.IntN(1800))
	claudeEvent(w, r, msg, fmt.Sprintf(`{"content_block":{"text":"","type":"text"},"index":%d,"type":"content_block_start"}`, idx))
	for _, p := range pieces(text, 2+len(text)/60) {
		claudeEvent(w, r, msg, fmt.Sprintf(`{"delta":{"text":%s,"type":"text_delta"},"index":%d,"type":"content_block_delta"}`, w.q(p), idx))
	}
	claudeAssistant(w, r, msg, fmt.Sprintf(`{"text":%s,"type":"text"}`, w.q(text)))
	claudeEvent(w, r, msg, fmt.Sprintf(`{"index":%d,"type":"content_block_stop"}`, idx))
	idx++
	tool := i%4 != 3
	toolID := fmt.Sprintf("toolu_bench_%d", i)
	if tool {
		claudeEvent(w, r, msg, fmt.Sprintf(`{"content_block":{"id":"%s","input":{},"name":"Bash","type":"tool_use"},"index":%d,"type":"content_block_start"}`, toolID, idx))
		input := fmt.Sprintf(`{"command":"grep -rn \"func Run\" internal/ | head -%d","description":"Find the Run functions"}`, 10+i)
		for _, p := range pieces(input, 3) {
			claudeEvent(w, r, msg, fmt.Sprintf(`{"delta":{"partial_json":%s,"type":"input_json_delta"},"index":%d,"type":"content_block_delta"}`, w.q(p), idx))
		}
		claudeAssistant(w, r, msg, fmt.Sprintf(`{"id":"%s","input":%s,"name":"Bash","type":"tool_use"}`, toolID, input))
		claudeEvent(w, r, msg, fmt.Sprintf(`{"index":%d,"type":"content_block_stop"}`, idx))
	}
	stop := "end_turn"
	if tool {
		stop = "tool_use"
	}
	claudeEvent(w, r, msg, fmt.Sprintf(`{"delta":{"stop_reason":"%s","stop_sequence":null},"type":"message_delta","usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":1520,"input_tokens":10,"output_tokens":%d}}`, stop, 5+r.IntN(500)))
	claudeEvent(w, r, msg, `{"type":"message_stop"}`)
	if tool {
		claudeToolResult(w, toolID, toolOutput(r, outputSize(r)), i%7 == 5)
	}
}

// --- codex: exec --json ---

func codexHeader() []byte {
	w := &writer{}
	w.f(`{"type":"thread.started","thread_id":"01a20097-b85e-79c2-ae22-d9ad864e26b6"}`)
	w.f(`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for %s not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}`, "`bench-model`")
	w.f(`{"type":"turn.started"}`)
	return w.b
}

func codexTrailer() []byte {
	w := &writer{}
	w.f(`{"type":"item.completed","item":{"id":"item_final","type":"agent_message","text":"All tests pass now."}}`)
	w.f(`{"type":"turn.completed","usage":{"input_tokens":182000,"cached_input_tokens":150000,"cache_write_input_tokens":0,"output_tokens":9100,"reasoning_output_tokens":2400}}`)
	return w.b
}

func codexTurn(w *writer, r *rand.Rand, i int) {
	id := func(k int) string { return fmt.Sprintf("item_%d", 10*i+k+1) }
	if i%2 == 0 {
		w.f(`{"type":"item.completed","item":{"id":"%s","type":"reasoning","text":%s}}`, id(0), w.q("**Planning the fix**\n"+prose(r, 100+r.IntN(500))))
	}
	cmd := w.q(fmt.Sprintf("/bin/bash -lc 'go test ./internal/pkg%d/... 2>&1 | tail -n %d'", i, 50+i))
	w.f(`{"type":"item.started","item":{"id":"%s","type":"command_execution","command":%s,"aggregated_output":"","exit_code":null,"status":"in_progress"}}`, id(1), cmd)
	code := 0
	if i%5 == 2 {
		code = 1
	}
	status := "completed"
	if code != 0 {
		status = "failed"
	}
	w.f(`{"type":"item.completed","item":{"id":"%s","type":"command_execution","command":%s,"aggregated_output":%s,"exit_code":%d,"status":"%s"}}`, id(1), cmd, w.q(toolOutput(r, outputSize(r))), code, status)
	if i%3 == 0 {
		w.f(`{"type":"item.started","item":{"id":"%s","type":"file_change","changes":[{"path":"/repo/internal/pkg%d/file.go","kind":"update"}],"status":"in_progress"}}`, id(2), i)
		w.f(`{"type":"item.completed","item":{"id":"%s","type":"file_change","changes":[{"path":"/repo/internal/pkg%d/file.go","kind":"update"}],"status":"completed"}}`, id(2), i)
	}
	if i%5 == 0 {
		w.f(`{"type":"item.started","item":{"id":"%s","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"context cancellation"},"result":null,"error":null,"status":"in_progress"}}`, id(3))
		w.f(`{"type":"item.completed","item":{"id":"%s","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"context cancellation"},"result":{"content":[{"type":"text","text":%s}],"structured_content":null},"error":null,"status":"completed"}}`, id(3), w.q(prose(r, 300+r.IntN(2000))))
	}
	if i%4 == 1 {
		w.f(`{"type":"item.updated","item":{"id":"item_plan","type":"todo_list","items":[{"text":"Reproduce the failure","completed":true},{"text":%s,"completed":false},{"text":"Run the tests","completed":false}]}}`, w.q(prose(r, 40)))
	}
	w.f(`{"type":"item.completed","item":{"id":"%s","type":"agent_message","text":%s}}`, id(4), w.q(prose(r, 100+r.IntN(1500))))
}

// --- gemini: -o stream-json ---

func geminiHeader() []byte {
	w := &writer{}
	w.f(`{"type":"init","timestamp":"2026-11-22T00:11:18.098Z","session_id":"002dc419-af23-4679-be98-db6f2e3452e8","model":"auto"}`)
	w.f(`{"type":"message","timestamp":"2026-11-22T00:11:18.099Z","role":"user","content":"Fix the failing tests."}`)
	return w.b
}

func geminiResult() []byte {
	w := &writer{}
	w.f(`{"type":"message","timestamp":"2026-11-22T00:11:18.363Z","role":"assistant","content":"All tests pass now.","delta":true}`)
	w.f(`{"type":"result","timestamp":"2026-11-22T00:11:18.370Z","status":"success","stats":{"total_tokens":45,"input_tokens":30,"output_tokens":15,"cached":0,"input":30,"duration_ms":272,"tool_calls":1,"models":{"gemini-3.5-flash-lite":{"total_tokens":15,"input_tokens":10,"output_tokens":5,"cached":0,"input":10},"gemini-3.8-flash":{"total_tokens":30,"input_tokens":20,"output_tokens":10,"cached":0,"input":20}}}}`)
	return w.b
}

func geminiTurn(w *writer, r *rand.Rand, i int) {
	text := prose(r, 200+r.IntN(1800))
	for _, p := range pieces(text, 2+len(text)/100) {
		w.f(`{"type":"message","timestamp":"2026-11-22T00:11:18.363Z","role":"assistant","content":%s,"delta":true}`, w.q(p))
	}
	tid := fmt.Sprintf("run_shell_command__run_shell_command_1795306278167_%d", i)
	w.f(`{"type":"tool_use","timestamp":"2026-11-22T00:11:18.232Z","tool_name":"run_shell_command","tool_id":"%s","parameters":{"command":"go test ./internal/pkg%d/...","description":"Run the package tests"}}`, tid, i)
	if i%7 == 5 {
		w.f(`{"type":"tool_result","timestamp":"2026-11-22T00:11:18.344Z","tool_id":"%s","status":"error","output":%s,"error":{"type":"execution_failed","message":"Command exited with code 1"}}`, tid, w.q(toolOutput(r, outputSize(r))))
		return
	}
	w.f(`{"type":"tool_result","timestamp":"2026-11-22T00:11:18.344Z","tool_id":"%s","status":"success","output":%s}`, tid, w.q(toolOutput(r, outputSize(r))))
}

// --- opencode: run --format json ---

const opencodeSession = "ses_dff67b543ffeWYOCeuBfFnXx75"

func opencodePart(w *writer, typ, part string) {
	w.f(`{"type":"%s","timestamp":1795306313455,"sessionID":"%s","part":%s}`, typ, opencodeSession, part)
}

func opencodeTool(w *writer, call, cmd, out string) {
	q := w.q(out)
	opencodePart(w, "tool_use", fmt.Sprintf(`{"type":"tool","tool":"bash","callID":"call_%s","state":{"status":"completed","input":{"command":%s,"description":"Run the command"},"output":%s,"metadata":{"output":%s,"exit":0,"truncated":false},"title":%s,"time":{"start":1795306312830,"end":1795306313658}},"id":"prt_20098546b001qYnxgol0dJldca","sessionID":"%s","messageID":"msg_2009850fb001VqQqy0i5nf0J1L"}`, call, w.q(cmd), q, q, w.q(cmd), opencodeSession))
}

func opencodeStep(w *writer, msg, reason string) {
	opencodePart(w, "step_finish", fmt.Sprintf(`{"id":"prt_2009857c0001n9ztaoNwiGEZFj","reason":"%s","messageID":"%s","sessionID":"%s","type":"step-finish","tokens":{"total":1615,"input":1510,"output":105,"reasoning":12,"cache":{"write":0,"read":1400}},"cost":0.00123}`, reason, msg, opencodeSession))
}

func opencodeTurn(w *writer, r *rand.Rand, i int) {
	msg := fmt.Sprintf("msg_2009850fb%03dVqQqy0i5nf0J1L", i)
	opencodePart(w, "step_start", fmt.Sprintf(`{"id":"prt_200985465001Q6s7djskwGQgVc","messageID":"%s","sessionID":"%s","type":"step-start"}`, msg, opencodeSession))
	if i%2 == 0 {
		opencodePart(w, "reasoning", fmt.Sprintf(`{"id":"prt_20099041e001twRV6mt3WOamh6","messageID":"%s","sessionID":"%s","type":"reasoning","text":%s,"time":{"start":1795306357790,"end":1795306357813}}`, msg, opencodeSession, w.q(prose(r, 100+r.IntN(600)))))
	}
	opencodePart(w, "text", fmt.Sprintf(`{"id":"prt_20098584e001JoZVsiiI12pJYp","messageID":"%s","sessionID":"%s","type":"text","text":%s,"time":{"start":1795306313806,"end":1795306313811}}`, msg, opencodeSession, w.q(prose(r, 200+r.IntN(1800)))))
	opencodeTool(w, fmt.Sprint(i), fmt.Sprintf("go test ./internal/pkg%d/...", i), toolOutput(r, outputSize(r)))
	opencodeStep(w, msg, "tool-calls")
}

// opencodeFinal is the last step of an opencode run: text, then a
// step_finish with reason "stop". opencode 1.18.33 prints no other
// terminal event.
func opencodeFinal() []byte {
	w := &writer{}
	msg := "msg_20098f942001Z4wyueidLHddLk"
	opencodePart(w, "step_start", fmt.Sprintf(`{"id":"prt_20099040a00125TYFZBiRWqnqD","messageID":"%s","sessionID":"%s","type":"step-start"}`, msg, opencodeSession))
	opencodePart(w, "text", fmt.Sprintf(`{"id":"prt_200990451001Kg0PcpsuVH6GQI","messageID":"%s","sessionID":"%s","type":"text","text":"All tests pass now.","time":{"start":1795306357841,"end":1795306357864}}`, msg, opencodeSession))
	opencodeStep(w, msg, "stop")
	return w.b
}
