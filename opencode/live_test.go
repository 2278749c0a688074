package opencode

// Transcripts captured from the real opencode 1.18.33 by hand, in addition
// to testdata/real: run inside a private network namespace against an
// agentclitest.Server wired with Server.Wire (2026-11-22), prompt on stdin.

// liveTranscript is one captured run.
type liveTranscript struct {
	cmd    string // the opencode arguments and what the server was told
	stdout string
	stderr string
	exit   int
}

var live = map[string]liveTranscript{
	"multistep": {
		cmd: "run --format json; turns: text \"let me check\" + bash `echo one`, text \"step2 text\" + bash `echo two`, text \"final\"",
		stdout: "" +
			"{\"type\":\"step_start\",\"timestamp\":1795307283714,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a724d4001veoM2L5Fk8R7RD\",\"messageID\":\"msg_200a722cc001BQjBsaASqb32Wk\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"step-start\"}}\n" +
			"{\"type\":\"text\",\"timestamp\":1795307283716,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a724d8001h5AWzAYAsqMTef\",\"messageID\":\"msg_200a722cc001BQjBsaASqb32Wk\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"text\",\"text\":\"let me check\",\"time\":{\"start\":1795307283672,\"end\":1795307283710}}}\n" +
			"{\"type\":\"tool_use\",\"timestamp\":1795307285003,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"type\":\"tool\",\"tool\":\"bash\",\"callID\":\"call_agentclitest_2\",\"state\":{\"status\":\"completed\",\"input\":{\"command\":\"echo one\",\"description\":\"Run echo one\"},\"output\":\"one\\n\",\"metadata\":{\"output\":\"one\\n\",\"exit\":0,\"truncated\":false},\"title\":\"echo one\",\"time\":{\"start\":1795307283698,\"end\":1795307284946}},\"id\":\"prt_200a724de001rMR4Qy92ObRvtK\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"messageID\":\"msg_200a722cc001BQjBsaASqb32Wk\"}}\n" +
			"{\"type\":\"step_finish\",\"timestamp\":1795307285003,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a729db001bj1DilwlkdUcT9\",\"reason\":\"tool-calls\",\"messageID\":\"msg_200a722cc001BQjBsaASqb32Wk\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"step-finish\",\"tokens\":{\"total\":15,\"input\":10,\"output\":5,\"reasoning\":0,\"cache\":{\"write\":0,\"read\":0}},\"cost\":0}}\n" +
			"{\"type\":\"step_start\",\"timestamp\":1795307285613,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a72c0b001iW0se754kBDvWU\",\"messageID\":\"msg_200a729ee001Y0aJx9FvjSD38A\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"step-start\"}}\n" +
			"{\"type\":\"text\",\"timestamp\":1795307285615,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a72c13001csxJMP3PzDbWsb\",\"messageID\":\"msg_200a729ee001Y0aJx9FvjSD38A\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"text\",\"text\":\"step2 text\",\"time\":{\"start\":1795307285523,\"end\":1795307285593}}}\n" +
			"{\"type\":\"tool_use\",\"timestamp\":1795307285737,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"type\":\"tool\",\"tool\":\"bash\",\"callID\":\"call_agentclitest_3\",\"state\":{\"status\":\"completed\",\"input\":{\"command\":\"echo two\",\"description\":\"Run echo two\"},\"output\":\"two\\n\",\"metadata\":{\"output\":\"two\\n\",\"exit\":0,\"truncated\":false},\"title\":\"echo two\",\"time\":{\"start\":1795307285552,\"end\":1795307285670}},\"id\":\"prt_200a72c20001HyIFg0g21H80mF\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"messageID\":\"msg_200a729ee001Y0aJx9FvjSD38A\"}}\n" +
			"{\"type\":\"step_finish\",\"timestamp\":1795307285740,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a72ca9001sc6Ckf9sI5HYNr\",\"reason\":\"tool-calls\",\"messageID\":\"msg_200a729ee001Y0aJx9FvjSD38A\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"step-finish\",\"tokens\":{\"total\":15,\"input\":10,\"output\":5,\"reasoning\":0,\"cache\":{\"write\":0,\"read\":0}},\"cost\":0}}\n" +
			"{\"type\":\"step_start\",\"timestamp\":1795307285959,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a72d530019KQR24avHcfkA8\",\"messageID\":\"msg_200a72cb7001LZadfP101hcYIP\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"step-start\"}}\n" +
			"{\"type\":\"text\",\"timestamp\":1795307285959,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a72d5d001dQpvThYpUjqrUi\",\"messageID\":\"msg_200a72cb7001LZadfP101hcYIP\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"text\",\"text\":\"final\",\"time\":{\"start\":1795307285853,\"end\":1795307285865}}}\n" +
			"{\"type\":\"step_finish\",\"timestamp\":1795307285959,\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"part\":{\"id\":\"prt_200a72d89001Mmd3IBxOGxp5BS\",\"reason\":\"stop\",\"messageID\":\"msg_200a72cb7001LZadfP101hcYIP\",\"sessionID\":\"ses_dff58e508ffesXnQAqy4c9cw0H\",\"type\":\"step-finish\",\"tokens\":{\"total\":15,\"input\":10,\"output\":5,\"reasoning\":0,\"cache\":{\"write\":0,\"read\":0}},\"cost\":0}}\n" +
			"",
		stderr: "",
		exit:   0,
	},
	"rejected": {
		cmd: "run --format json with OPENCODE_PERMISSION={\"bash\":\"ask\"} and no --auto; turns: bash `echo hi`, text",
		stdout: "" +
			"{\"type\":\"step_start\",\"timestamp\":1795307295120,\"sessionID\":\"ses_dff58be52ffeBlO93yYQ91ki19\",\"part\":{\"id\":\"prt_200a751520016B3eu53HXphhhS\",\"messageID\":\"msg_200a749ca001zaa62coPEFUdqF\",\"sessionID\":\"ses_dff58be52ffeBlO93yYQ91ki19\",\"type\":\"step-start\"}}\n" +
			"{\"type\":\"tool_use\",\"timestamp\":1795307295397,\"sessionID\":\"ses_dff58be52ffeBlO93yYQ91ki19\",\"part\":{\"type\":\"tool\",\"tool\":\"bash\",\"callID\":\"call_agentclitest_2\",\"state\":{\"status\":\"error\",\"input\":{\"command\":\"echo hi\",\"description\":\"Run echo hi\"},\"error\":\"The user rejected permission to use this specific tool call.\",\"time\":{\"start\":1795307295105,\"end\":1795307295311}},\"id\":\"prt_200a7515e001upY17JEzcMWR4p\",\"sessionID\":\"ses_dff58be52ffeBlO93yYQ91ki19\",\"messageID\":\"msg_200a749ca001zaa62coPEFUdqF\"}}\n" +
			"{\"type\":\"step_finish\",\"timestamp\":1795307295397,\"sessionID\":\"ses_dff58be52ffeBlO93yYQ91ki19\",\"part\":{\"id\":\"prt_200a75262001OnccIDYUL6l211\",\"reason\":\"tool-calls\",\"messageID\":\"msg_200a749ca001zaa62coPEFUdqF\",\"sessionID\":\"ses_dff58be52ffeBlO93yYQ91ki19\",\"type\":\"step-finish\",\"tokens\":{\"total\":15,\"input\":10,\"output\":5,\"reasoning\":0,\"cache\":{\"write\":0,\"read\":0}},\"cost\":0}}\n" +
			"",
		stderr: "\x1b[93m\x1b[1m! \x1b[0mpermission requested: bash (echo hi); auto-rejecting\n",
		exit:   0,
	},
	"usage": {
		cmd: "run --format json --thinking; turn: reasoning \"let me think\", text \"thought answer\", usage prompt 100 (30 cached), completion 20 (7 reasoning)",
		stdout: "" +
			"{\"type\":\"step_start\",\"timestamp\":1795307304328,\"sessionID\":\"ses_dff58996fffebl4xHcvfa66psA\",\"part\":{\"id\":\"prt_200a77539001AGqB6rAgqGt2wT\",\"messageID\":\"msg_200a77173001kAAv1HYV0Zf746\",\"sessionID\":\"ses_dff58996fffebl4xHcvfa66psA\",\"type\":\"step-start\"}}\n" +
			"{\"type\":\"reasoning\",\"timestamp\":1795307304328,\"sessionID\":\"ses_dff58996fffebl4xHcvfa66psA\",\"part\":{\"id\":\"prt_200a7754d001S0hHsEGVFYblHz\",\"messageID\":\"msg_200a77173001kAAv1HYV0Zf746\",\"sessionID\":\"ses_dff58996fffebl4xHcvfa66psA\",\"type\":\"reasoning\",\"text\":\"let me think\",\"time\":{\"start\":1795307304269,\"end\":1795307304282}}}\n" +
			"{\"type\":\"text\",\"timestamp\":1795307304328,\"sessionID\":\"ses_dff58996fffebl4xHcvfa66psA\",\"part\":{\"id\":\"prt_200a7755f001WrrLLM27bJ1sDX\",\"messageID\":\"msg_200a77173001kAAv1HYV0Zf746\",\"sessionID\":\"ses_dff58996fffebl4xHcvfa66psA\",\"type\":\"text\",\"text\":\"thought answer\",\"time\":{\"start\":1795307304287,\"end\":1795307304293}}}\n" +
			"{\"type\":\"step_finish\",\"timestamp\":1795307304328,\"sessionID\":\"ses_dff58996fffebl4xHcvfa66psA\",\"part\":{\"id\":\"prt_200a7756b001I1fhjkLrqAWjkK\",\"reason\":\"stop\",\"messageID\":\"msg_200a77173001kAAv1HYV0Zf746\",\"sessionID\":\"ses_dff58996fffebl4xHcvfa66psA\",\"type\":\"step-finish\",\"tokens\":{\"total\":120,\"input\":70,\"output\":13,\"reasoning\":7,\"cache\":{\"write\":0,\"read\":30}},\"cost\":0}}\n" +
			"",
		stderr: "",
		exit:   0,
	},
	"err401": {
		cmd: "run --format json; turn: HTTP 401 \"bad key\"",
		stdout: "" +
			"{\"type\":\"error\",\"timestamp\":1795307312646,\"sessionID\":\"ses_dff58747fffe06tsyDWJeQIZyg\",\"error\":{\"name\":\"APIError\",\"data\":{\"message\":\"bad key\",\"statusCode\":401,\"isRetryable\":false,\"responseHeaders\":{\"content-length\":\"88\",\"content-type\":\"application/json\",\"date\":\"Sun, 22 Nov 2026 00:28:32 GMT\"},\"responseBody\":\"{\\\"error\\\":{\\\"code\\\":null,\\\"message\\\":\\\"bad key\\\",\\\"param\\\":null,\\\"type\\\":\\\"invalid_request_error\\\"}}\\n\",\"metadata\":{\"url\":\"http://127.0.0.1:42661/v1/chat/completions\"}}}}\n" +
			"",
		stderr: "",
		exit:   1,
	},
	"unknown": {
		cmd: "run --format json --model nope/nope (a provider that does not exist)",
		stdout: "" +
			"{\"type\":\"error\",\"timestamp\":1795307320286,\"sessionID\":\"ses_dff5857f5ffe3P0MeMoVOfFHA5\",\"error\":{\"name\":\"UnknownError\",\"data\":{\"message\":\"Unexpected server error. Check server logs for details.\",\"ref\":\"err_36f6f897\"}}}\n" +
			"",
		stderr: "",
		exit:   1,
	},
	"nosess": {
		cmd: "run --format json --session ses_doesnotexist123",
		stdout: "" +
			"",
		stderr: "\x1b[91m\x1b[1mError: \x1b[0mSession not found\n",
		exit:   1,
	},
}
