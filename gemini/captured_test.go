package gemini

// Output of the real gemini 0.61.0, captured for this package's tests inside
// a private network namespace against an agentclitest.Server (Wire settings,
// -m gemini-2.5-flash, prompt "hi" on stdin unless noted). testdata/real has
// the shared captures; these cover the error paths it does not:
//
//   - auth-*: settings without security.auth.selectedType (exit 41)
//   - badresume-json: --resume=<unknown uuid> in a project with sessions
//   - empty-*: the model answered an empty stream (INVALID_STREAM, exit 0)
//   - err401-json, err429-stream: HTTP 401 / 429 from the model API
//   - maxturns-*: settings model.maxSessionTurns 1 and a tool call (exit 53)
//   - quit-*: the prompt "/quit" sent unescaped (FatalInputError, exit 42)
//   - tool-error-stream: a read_file call outside the workspace

type capture struct {
	stdout, stderr string
	exit           int
}

var captured = map[string]capture{
	"auth-json": {
		stdout: "",
		stderr: "YOLO mode is enabled. All tool calls will be automatically approved.\n{\n  \"session_id\": \"725e028b-2c11-4668-8640-4080d19098e6\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"Invalid auth method selected.\",\n    \"code\": 41\n  }\n}\n",
		exit:   41,
	},
	"auth-stream": {
		stdout: "",
		stderr: "YOLO mode is enabled. All tool calls will be automatically approved.\nInvalid auth method selected.\n",
		exit:   41,
	},
	"badresume-json": {
		stdout: "",
		stderr: "Error resuming session: Invalid session identifier \"11111111-2222-3333-4444-555555555555\".\n  Searched for sessions in /tmp/gemexp/hc/.gemini/tmp/work/chats.\n  Use --list-sessions to see available sessions, then use --resume {number}, --resume {uuid}, or --resume latest.\n",
		exit:   42,
	},
	"empty-json": {
		stdout: "{\n  \"session_id\": \"7a53afdd-c24c-4bd8-b5d3-f989df4c1fe8\",\n  \"response\": \"\",\n  \"stats\": {\n    \"models\": {\n      \"gemini-2.5-flash\": {\n        \"api\": {\n          \"totalRequests\": 1,\n          \"totalErrors\": 1,\n          \"totalLatencyMs\": 102,\n          \"errorsByType\": {\n            \"NO_RESPONSE_TEXT\": 1\n          }\n        },\n        \"tokens\": {\n          \"input\": 10,\n          \"prompt\": 10,\n          \"candidates\": 5,\n          \"total\": 15,\n          \"cached\": 0,\n          \"thoughts\": 0,\n          \"tool\": 0\n        },\n        \"roles\": {\n          \"main\": {\n            \"totalRequests\": 1,\n            \"totalErrors\": 0,\n            \"totalLatencyMs\": 102,\n            \"tokens\": {\n              \"input\": 10,\n              \"prompt\": 10,\n              \"candidates\": 5,\n              \"total\": 15,\n              \"cached\": 0,\n              \"thoughts\": 0,\n              \"tool\": 0\n            }\n          }\n        }\n      }\n    },\n    \"tools\": {\n      \"totalCalls\": 0,\n      \"totalSuccess\": 0,\n      \"totalFail\": 0,\n      \"totalDurationMs\": 0,\n      \"totalDecisions\": {\n        \"accept\": 0,\n        \"reject\": 0,\n        \"modify\": 0,\n        \"auto_accept\": 0\n      },\n      \"byName\": {}\n    },\n    \"files\": {\n      \"totalLinesAdded\": 0,\n      \"totalLinesRemoved\": 0\n    }\n  },\n  \"error\": {\n    \"type\": \"INVALID_STREAM\",\n    \"message\": \"The model returned an empty response with no text or thoughts. This may be a transient API issue; please try again.\"\n  }\n}",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\n",
		exit:   0,
	},
	"empty-stream": {
		stdout: "{\"type\":\"init\",\"timestamp\":\"2026-11-22T00:21:07.650Z\",\"session_id\":\"2f5b1456-2585-48ad-850a-0d7038329f7c\",\"model\":\"gemini-2.5-flash\"}\n{\"type\":\"message\",\"timestamp\":\"2026-11-22T00:21:07.652Z\",\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"error\",\"timestamp\":\"2026-11-22T00:21:07.777Z\",\"severity\":\"error\",\"message\":\"The model returned an empty response with no text or thoughts. This may be a transient API issue; please try again.\"}\n{\"type\":\"result\",\"timestamp\":\"2026-11-22T00:21:07.777Z\",\"status\":\"error\",\"stats\":{\"total_tokens\":15,\"input_tokens\":10,\"output_tokens\":5,\"cached\":0,\"input\":10,\"duration_ms\":128,\"tool_calls\":0,\"models\":{\"gemini-2.5-flash\":{\"total_tokens\":15,\"input_tokens\":10,\"output_tokens\":5,\"cached\":0,\"input\":10}}}}\n",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\n",
		exit:   0,
	},
	"err401-json": {
		stdout: "",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\nError when talking to Gemini API Full report available at: /tmp/gemexp/hc/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T00-21-04-497Z.json _ApiError: {\"error\":{\"code\":401,\"message\":\"API key not valid\",\"status\":\"UNAUTHENTICATED\"}}\n    at throwErrorIfNotOK (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n    at async file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267596:7\n    at async Models.generateContentStream (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:268692:16)\n    at async file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:311457:19\n    at async file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:288018:23\n    at async retryWithBackoff (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:308039:23)\n    at async GeminiChat.makeApiCallAndProcessStream (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332326:28)\n    at async GeminiChat.streamWithRetries (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332079:29)\n    at async Turn.run (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24) {\n  status: 401\n}\n{\n  \"session_id\": \"9a18ca6c-79d1-4a88-8530-cbf93e0a1e31\",\n  \"error\": {\n    \"type\": \"Error\",\n    \"message\": \"{\\\"error\\\":{\\\"code\\\":401,\\\"message\\\":\\\"API key not valid\\\",\\\"status\\\":\\\"UNAUTHENTICATED\\\"}}\",\n    \"code\": 401\n  }\n}\n",
		exit:   145,
	},
	"err429-stream": {
		stdout: "{\"type\":\"init\",\"timestamp\":\"2026-11-22T00:21:01.365Z\",\"session_id\":\"296413c1-4268-49b5-b787-61347e1fe9e9\",\"model\":\"gemini-2.5-flash\"}\n{\"type\":\"message\",\"timestamp\":\"2026-11-22T00:21:01.372Z\",\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"result\",\"timestamp\":\"2026-11-22T00:21:01.654Z\",\"status\":\"error\",\"error\":{\"type\":\"unknown\",\"message\":\"[API Error: quota]\\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method\"},\"stats\":{\"total_tokens\":0,\"input_tokens\":0,\"output_tokens\":0,\"cached\":0,\"input\":0,\"duration_ms\":0,\"tool_calls\":0,\"models\":{\"gemini-2.5-flash\":{\"total_tokens\":0,\"input_tokens\":0,\"output_tokens\":0,\"cached\":0,\"input\":0}}}}\n",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\nAttempt 1 failed: quota. Max attempts reached\nError when talking to Gemini API Full report available at: /tmp/gemexp/hc/tmp/gemini-client-error-Turn.run-sendMessageStream-2026-11-22T00-21-01-485Z.json RetryableQuotaError: quota\n    at classifyGoogleError (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:307333:14)\n    at retryWithBackoff (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:308062:29)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n    at async GeminiChat.makeApiCallAndProcessStream (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332326:28)\n    at async GeminiChat.streamWithRetries (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:332079:29)\n    at async Turn.run (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:333001:24)\n    at async GeminiClient.processTurn (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:346675:22)\n    at async GeminiClient.sendMessageStream (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:346772:14)\n    at async file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/gemini-3HFX2LNT.js:12198:26\n    at async main (file:///work/main/tools/clis/node_modules/@google/gemini-cli/bundle/gemini-3HFX2LNT.js:17627:5) {\n  cause: { code: 429, message: 'quota', details: [] },\n  retryDelayMs: undefined,\n  status: 429\n}\n",
		exit:   173,
	},
	"maxturns-json": {
		stdout: "",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\n{\n  \"session_id\": \"a92b396f-8da2-4a99-8d44-6f55f0a3c9b8\",\n  \"error\": {\n    \"type\": \"FatalTurnLimitedError\",\n    \"message\": \"Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json.\",\n    \"code\": 53\n  }\n}\n[ERROR] {\n  \"session_id\": \"a92b396f-8da2-4a99-8d44-6f55f0a3c9b8\",\n  \"error\": {\n    \"type\": \"FatalTurnLimitedError\",\n    \"message\": \"Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json.\",\n    \"code\": 53\n  }\n}\n",
		exit:   53,
	},
	"maxturns-stream": {
		stdout: "{\"type\":\"init\",\"timestamp\":\"2026-11-22T00:20:42.863Z\",\"session_id\":\"dd0a6a45-36e7-4b7b-a4de-668468471a51\",\"model\":\"gemini-2.5-flash\"}\n{\"type\":\"message\",\"timestamp\":\"2026-11-22T00:20:42.865Z\",\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"tool_use\",\"timestamp\":\"2026-11-22T00:20:43.055Z\",\"tool_name\":\"run_shell_command\",\"tool_id\":\"run_shell_command__run_shell_command_1795306842927_0\",\"parameters\":{\"command\":\"echo one\",\"description\":\"Run echo one\"}}\n{\"type\":\"tool_result\",\"timestamp\":\"2026-11-22T00:20:43.291Z\",\"tool_id\":\"run_shell_command__run_shell_command_1795306842927_0\",\"status\":\"success\",\"output\":\"one\"}\n{\"type\":\"result\",\"timestamp\":\"2026-11-22T00:20:43.297Z\",\"status\":\"error\",\"error\":{\"type\":\"FatalTurnLimitedError\",\"message\":\"Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json.\"},\"stats\":{\"total_tokens\":15,\"input_tokens\":10,\"output_tokens\":5,\"cached\":0,\"input\":10,\"duration_ms\":0,\"tool_calls\":1,\"models\":{\"gemini-2.5-flash\":{\"total_tokens\":15,\"input_tokens\":10,\"output_tokens\":5,\"cached\":0,\"input\":10}}}}\n",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\n",
		exit:   53,
	},
	"quit-json": {
		stdout: "",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\n{\n  \"session_id\": \"913616ae-c574-48fb-bae0-13f0350e5e2f\",\n  \"error\": {\n    \"type\": \"FatalInputError\",\n    \"message\": \"Exiting due to command result that is not supported in non-interactive mode.\",\n    \"code\": 42\n  }\n}\n",
		exit:   42,
	},
	"quit-stream": {
		stdout: "{\"type\":\"init\",\"timestamp\":\"2026-11-22T00:21:17.242Z\",\"session_id\":\"ad2c625d-d04a-4bc8-8682-b3e1d5197c8d\",\"model\":\"gemini-2.5-flash\"}\n{\"type\":\"result\",\"timestamp\":\"2026-11-22T00:21:17.314Z\",\"status\":\"error\",\"error\":{\"type\":\"FatalInputError\",\"message\":\"[API Error: Exiting due to command result that is not supported in non-interactive mode.]\"},\"stats\":{\"total_tokens\":0,\"input_tokens\":0,\"output_tokens\":0,\"cached\":0,\"input\":0,\"duration_ms\":0,\"tool_calls\":0,\"models\":{}}}\n",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\n",
		exit:   42,
	},
	"tool-error-stream": {
		stdout: "{\"type\":\"init\",\"timestamp\":\"2026-11-22T00:21:20.466Z\",\"session_id\":\"d5234e5a-a890-458a-a714-bf9d7f19cc7f\",\"model\":\"gemini-2.5-flash\"}\n{\"type\":\"message\",\"timestamp\":\"2026-11-22T00:21:20.469Z\",\"role\":\"user\",\"content\":\"hi\"}\n{\"type\":\"tool_use\",\"timestamp\":\"2026-11-22T00:21:20.556Z\",\"tool_name\":\"read_file\",\"tool_id\":\"read_file__read_file_1795306880517_0\",\"parameters\":{\"file_path\":\"/nonexistent/x\"}}\n{\"type\":\"tool_result\",\"timestamp\":\"2026-11-22T00:21:20.599Z\",\"tool_id\":\"read_file__read_file_1795306880517_0\",\"status\":\"error\",\"output\":\"Path not in workspace: Attempted path \\\"/nonexistent/x\\\" resolves outside the allowed workspace directories: /tmp/gemexp/hc/work or the project temp directory: /tmp/gemexp/hc/.gemini/tmp/work\",\"error\":{\"type\":\"invalid_tool_params\",\"message\":\"Path not in workspace: Attempted path \\\"/nonexistent/x\\\" resolves outside the allowed workspace directories: /tmp/gemexp/hc/work or the project temp directory: /tmp/gemexp/hc/.gemini/tmp/work\"}}\n{\"type\":\"message\",\"timestamp\":\"2026-11-22T00:21:20.616Z\",\"role\":\"assistant\",\"content\":\"do\",\"delta\":true}\n{\"type\":\"message\",\"timestamp\":\"2026-11-22T00:21:20.618Z\",\"role\":\"assistant\",\"content\":\"ne\",\"delta\":true}\n{\"type\":\"result\",\"timestamp\":\"2026-11-22T00:21:20.620Z\",\"status\":\"success\",\"stats\":{\"total_tokens\":30,\"input_tokens\":20,\"output_tokens\":10,\"cached\":0,\"input\":20,\"duration_ms\":154,\"tool_calls\":1,\"models\":{\"gemini-2.5-flash\":{\"total_tokens\":30,\"input_tokens\":20,\"output_tokens\":10,\"cached\":0,\"input\":20}}}}\n",
		stderr: "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nYOLO mode is enabled. All tool calls will be automatically approved.\nYOLO mode is enabled. All tool calls will be automatically approved.\nRipgrep is not available. Falling back to GrepTool.\nError executing tool read_file: Path not in workspace: Attempted path \"/nonexistent/x\" resolves outside the allowed workspace directories: /tmp/gemexp/hc/work or the project temp directory: /tmp/gemexp/hc/.gemini/tmp/work\n",
		exit:   0,
	},
}
