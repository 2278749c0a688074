package agentclitest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// geminiContent is a Gemini Content: a role and parts.
type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text             *string `json:"text"`
		Thought          bool    `json:"thought"`
		FunctionResponse *struct {
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Response json.RawMessage `json:"response"`
		} `json:"functionResponse"`
	} `json:"parts"`
}

// geminiReq is the part of a Gemini request the server reads.
type geminiReq struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction json.RawMessage `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseSchema     map[string]any `json:"responseSchema"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
	} `json:"generationConfig"`
	// countTokens may wrap a whole request.
	GenerateContentRequest *geminiReq `json:"generateContentRequest"`
}

// splitGeminiPath returns model and method of ".../models/{model}:{method}".
func splitGeminiPath(p string) (model, method string) {
	i := strings.Index(p, "/models/")
	rest := p[i+len("/models/"):]
	j := strings.LastIndex(rest, ":")
	if j < 0 {
		return rest, ""
	}
	return rest[:j], rest[j+1:]
}

func parseGemini(rec *ModelRequest, body []byte) (geminiReq, error) {
	var in geminiReq
	if err := json.Unmarshal(body, &in); err != nil {
		return in, err
	}
	if in.GenerateContentRequest != nil && len(in.Contents) == 0 {
		in.Contents = in.GenerateContentRequest.Contents
		in.SystemInstruction = in.GenerateContentRequest.SystemInstruction
	}
	if len(in.SystemInstruction) > 0 {
		var c geminiContent
		if json.Unmarshal(in.SystemInstruction, &c) == nil && c.Parts != nil {
			var parts []string
			for _, p := range c.Parts {
				if p.Text != nil {
					parts = append(parts, *p.Text)
				}
			}
			rec.System = strings.Join(parts, "\n")
		} else {
			rec.System = textOf(in.SystemInstruction)
		}
	}
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			rec.Tools = append(rec.Tools, f.Name)
		}
	}
	for _, c := range in.Contents {
		role := c.Role
		if role == "model" {
			role = "assistant"
		}
		if role == "" {
			role = "user"
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				id := p.FunctionResponse.ID
				if id == "" {
					id = p.FunctionResponse.Name
				}
				rec.ToolResults = append(rec.ToolResults, ModelToolResult{CallID: id, Output: geminiOutput(p.FunctionResponse.Response)})
			case p.Text != nil && !p.Thought:
				rec.Messages = append(rec.Messages, Message{Role: role, Text: *p.Text})
			}
		}
	}
	return in, nil
}

// geminiOutput returns the "output" string of a functionResponse.response, or
// the response's JSON encoding.
func geminiOutput(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		if o, ok := m["output"]; ok {
			var s string
			if json.Unmarshal(o, &s) == nil {
				return s
			}
		}
	}
	return string(raw)
}

func geminiError(status int, msg string) any {
	st := "INTERNAL"
	switch status {
	case 400:
		st = "INVALID_ARGUMENT"
	case 401:
		st = "UNAUTHENTICATED"
	case 403:
		st = "PERMISSION_DENIED"
	case 404:
		st = "NOT_FOUND"
	case 429:
		st = "RESOURCE_EXHAUSTED"
	case 503:
		st = "UNAVAILABLE"
	}
	return map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}}
}

func (s *Server) handleGemini(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		return
	}
	rec := newRequest("gemini", r, body)
	model, method := splitGeminiPath(r.URL.Path)
	rec.Model = model
	rec.Stream = method == "streamGenerateContent"
	in, perr := parseGemini(&rec, body)
	gc := in.GenerationConfig
	schema := gc.ResponseJSONSchema
	if schema == nil {
		schema = gc.ResponseSchema
	}
	switch {
	case method == "countTokens":
		rec.Utility = true
		s.take(rec)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": len(body)/4 + 1})
		return
	case method == "generateContent" && (schema != nil || gc.ResponseMimeType == "application/json"):
		// Router, next-speaker and similar structured side calls.
		rec.Utility = true
		s.take(rec)
		out, _ := json.Marshal(fromSchema(schema, 0))
		writeJSON(w, http.StatusOK, geminiResponse(model, []any{map[string]any{"text": string(out)}}, "STOP", Turn{}.usage()))
		return
	case method != "streamGenerateContent" && method != "generateContent":
		s.take(rec)
		writeJSON(w, http.StatusNotFound, geminiError(404, "agentclitest: unknown method "+method))
		return
	}
	t, seq := s.takeTurn(w, rec)
	if s.refuse(w, r, t, perr, geminiError) {
		return
	}
	call := t.call(seq, "agentclitest_call_", rec.Tools, shellArgs, "run_shell_command")
	var fcall map[string]any
	if call != nil {
		fc := map[string]any{"name": call.Name, "args": call.Args}
		if t.Tool != nil && t.Tool.ID != "" {
			fc["id"] = call.ID
		}
		fcall = map[string]any{"functionCall": fc}
	}
	writeGeminiTurn(w, model, t, fcall, rec.Stream)
}

// writeGeminiTurn answers with turn t, its function call part fcall (nil
// for none): one response, or a stream of SSE frames (its thinking and
// text in chunks, then the call) the last of which says STOP.
func writeGeminiTurn(w http.ResponseWriter, model string, t Turn, fcall map[string]any, stream bool) {
	u := t.usage()
	if !stream {
		var parts []any
		if t.Thinking != "" {
			parts = append(parts, map[string]any{"text": t.Thinking, "thought": true})
		}
		if t.Text != "" {
			parts = append(parts, map[string]any{"text": t.Text})
		}
		if fcall != nil {
			parts = append(parts, fcall)
		}
		writeJSON(w, http.StatusOK, geminiResponse(model, parts, "STOP", u))
		return
	}
	ev := startSSE(w)
	var frames [][]any
	for _, c := range chunks(t.Thinking) {
		frames = append(frames, []any{map[string]any{"text": c, "thought": true}})
	}
	for _, c := range chunks(t.Text) {
		frames = append(frames, []any{map[string]any{"text": c}})
	}
	if fcall != nil {
		frames = append(frames, []any{fcall})
	}
	if len(frames) == 0 {
		frames = append(frames, []any{map[string]any{"text": ""}})
	}
	for i, parts := range frames {
		finish := ""
		if i == len(frames)-1 {
			finish = "STOP"
		}
		ev.frame("", geminiResponse(model, parts, finish, u), "\r\n\r\n")
	}
}

// geminiResponse builds a GenerateContentResponse. finish "" omits
// finishReason (a non-final stream frame).
func geminiResponse(model string, parts []any, finish string, u TurnUsage) map[string]any {
	if parts == nil {
		parts = []any{}
	}
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	if finish != "" {
		cand["finishReason"] = finish
	}
	um := map[string]any{
		"promptTokenCount":     u.InputTokens,
		"candidatesTokenCount": u.OutputTokens,
		"totalTokenCount":      u.InputTokens + u.OutputTokens + u.ReasoningTokens,
	}
	if u.CachedTokens != 0 {
		um["cachedContentTokenCount"] = u.CachedTokens
	}
	if u.ReasoningTokens != 0 {
		um["thoughtsTokenCount"] = u.ReasoningTokens
	}
	return map[string]any{"candidates": []any{cand}, "usageMetadata": um, "modelVersion": model}
}

// fromSchema returns a value valid for a (Gemini or JSON) schema: the first
// enum value, the minimum of numbers (else 1), "agentclitest" for strings,
// false, [] (or minItems elements) and objects with every property filled.
func fromSchema(schema map[string]any, depth int) any {
	if schema == nil || depth > 8 {
		return map[string]any{}
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := schema[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return fromSchema(m, depth+1)
			}
		}
	}
	typ, _ := schema["type"].(string)
	if ts, ok := schema["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	switch strings.ToLower(typ) {
	case "integer", "number":
		if m, ok := schema["minimum"].(float64); ok {
			return m
		}
		return 1
	case "string":
		return "agentclitest"
	case "boolean":
		return false
	case "array":
		items, _ := schema["items"].(map[string]any)
		n := 0
		if m, ok := schema["minItems"].(float64); ok {
			n = int(m)
		}
		out := []any{}
		for range n {
			out = append(out, fromSchema(items, depth+1))
		}
		return out
	case "null":
		return nil
	default:
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			m, _ := v.(map[string]any)
			out[k] = fromSchema(m, depth+1)
		}
		return out
	}
}
