"""A mock model provider on loopback for the real-client tests (Claude Code, Codex): one server
that speaks Anthropic Messages, OpenAI chat and OpenAI Responses, streamed and not, and answers
by what a request contains rather than from a queue, because a client sends side requests
(titles, summaries) in an order of its own choosing.

- The latest user text contains `RUN_TOOL <word>` and no tool result followed it, and the
  request offers a shell tool → the reply is one call of that tool, printing `<word>-done`
  (the word never appears as `<word>-done` in the command, so it can only come back as the
  tool's output).
- The latest user text contains `RUN_AGENT <word>` and Claude Code's subagent tool is offered
  → one call of it, a subagent on Claude Code's small/fast model (`haiku`) told `Say <word>.`
- The latest user text contains `REFUSE_THIS` → a 400 in the provider's own shape, `REFUSAL`.
- Otherwise the reply is text: `Saw tool result: …` after a tool result, else `MOCK_REPLY`.

It also speaks Gemini's generateContent (streamed with `alt=sse`), and checks function
parameters the way Gemini does: a schema keyword outside Gemini's OpenAPI subset is a 400.

Like the real providers, it refuses what only they could have minted: an Anthropic thinking
block whose signature it did not sign, a Responses reasoning item whose `encrypted_content` it
did not encrypt (400, in the provider's own wording). With `reasoning=True` its chat replies
carry `reasoning_content` (as Grok's do), so corvid has something to turn into a thinking block.
"""

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MOCK_REPLY = "Hello from the mock model."
ANTHROPIC_SIGNATURE = "mock-anthropic-signature:"
RESPONSES_ENCRYPTED = "mock-responses-encrypted:"
GEMINI_SIGNATURE = "bW9jay1nZW1pbmktc2lnbmF0dXJl"  # base64, as Gemini's are
SHELL_TOOLS = ("Bash", "exec_command", "shell_command", "shell")
# Claude Code's subagent tool (`Task` before 2.1): `RUN_AGENT <word>` starts one on Haiku.
AGENT_TOOLS = ("Agent", "Task")
# The schema fields Gemini's `parameters` (an OpenAPI 3.0 subset) accepts.
GEMINI_SCHEMA_FIELDS = {"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
                        "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
                        "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum",
                        "maximum"}


def gemini_schema_fault(schema, where: str):
    """The first field Gemini would refuse in a `parameters` schema, with its location."""
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            fault = gemini_schema_fault(item, f"{where}[{index}]")
            if fault:
                return fault
        return None
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        if key not in GEMINI_SCHEMA_FIELDS:
            return f"Unknown name \"{key}\" at '{where}': Cannot find field."
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                fault = gemini_schema_fault(sub, f"{where}.properties[{name}].value")
                if fault:
                    return fault
        elif key in ("items", "anyOf"):
            fault = gemini_schema_fault(value, f"{where}.{key}")
            if fault:
                return fault
    return None


def _text_of(content) -> str:
    """All the text in a message content (string, or a list of parts of any dialect)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "content", "output"):
            if key in content:
                return _text_of(content[key])
    return ""


def turns(dialect: str, body: dict) -> list:
    """The conversation as `(kind, text)`: kind is `user`, `tool_result` or `assistant`."""
    out = []
    if dialect == "anthropic":
        for message in body.get("messages", []):
            content = message.get("content")
            if message.get("role") != "user":
                out.append(("assistant", _text_of(content)))
                continue
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for block in blocks:
                if block.get("type") == "tool_result":
                    out.append(("tool_result", _text_of(block.get("content"))))
                elif block.get("type") == "text":
                    out.append(("user", block.get("text", "")))
    elif dialect == "chat":
        for message in body.get("messages", []):
            role = message.get("role")
            if role == "tool":
                out.append(("tool_result", _text_of(message.get("content"))))
            elif role == "user":
                out.append(("user", _text_of(message.get("content"))))
            elif role == "assistant":
                out.append(("assistant", _text_of(message.get("content"))))
    elif dialect == "gemini":
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                if "functionResponse" in part:
                    out.append(("tool_result", json.dumps(part["functionResponse"].get("response"))))
                elif "text" in part and not part.get("thought"):
                    out.append(("user" if content.get("role") != "model" else "assistant", part["text"]))
    else:
        items = body.get("input", [])
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        for item in items:
            kind = item.get("type", "message")
            if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                out.append(("tool_result", _text_of(item.get("output"))))
            elif kind == "message" and item.get("role") == "user":
                out.append(("user", _text_of(item.get("content"))))
            elif kind == "message" and item.get("role") == "assistant":
                out.append(("assistant", _text_of(item.get("content"))))
    return out


def tool_names(dialect: str, body: dict) -> list:
    names = []
    for tool in body.get("tools") or []:
        if dialect == "gemini":
            names += [declaration.get("name") for declaration in tool.get("functionDeclarations", [])]
        elif dialect == "chat":
            names.append((tool.get("function") or {}).get("name"))
        else:
            names.append(tool.get("name"))
    return [name for name in names if name]


def shell_arguments(tool: str, word: str) -> dict:
    script = f"printf '%s-%s\\n' {word} done"
    if tool == "Bash":
        return {"command": script, "description": "Print a marker"}
    if tool == "exec_command":
        return {"cmd": script}
    if tool == "shell_command":
        return {"command": script}
    return {"command": ["bash", "-lc", script]}


REFUSAL = "mock refusal: the request names an unsupported parameter"


def decide(dialect: str, body: dict):
    """`("tool", name, arguments)`, `("text", text)` or `("refuse", message)`."""
    conversation = turns(dialect, body)
    last_user = max((i for i, (kind, _) in enumerate(conversation) if kind == "user"), default=-1)
    if last_user >= 0 and "REFUSE_THIS" in conversation[last_user][1]:
        return ("refuse", REFUSAL)
    results_after = [text for kind, text in conversation[last_user + 1:] if kind == "tool_result"]
    if results_after:
        return ("text", "Saw tool result: " + results_after[-1].strip()[:200])
    if last_user >= 0 and "RUN_TOOL" in conversation[last_user][1]:
        word = conversation[last_user][1].split("RUN_TOOL", 1)[1].split()[0].strip(".,")
        offered = tool_names(dialect, body)
        for tool in SHELL_TOOLS:
            if tool in offered:
                return ("tool", tool, shell_arguments(tool, word))
    if last_user >= 0 and "RUN_AGENT" in conversation[last_user][1]:
        word = conversation[last_user][1].split("RUN_AGENT", 1)[1].split()[0].strip(".,")
        offered = tool_names(dialect, body)
        for tool in AGENT_TOOLS:
            if tool in offered:
                return ("tool", tool, {"description": "Quick look", "prompt": f"Say {word}.",
                                       "subagent_type": "general-purpose", "model": "haiku",
                                       "run_in_background": False})
    return ("text", MOCK_REPLY)


class MockModel:
    """The running server: `base_url` ends in `/v1`; `requests` lists what came in."""

    def __init__(self, reasoning: bool = False):
        self.reasoning = reasoning
        self.requests = []
        # Keys answered 429 (a key pool's member at its rate limit).
        self.rate_limited_keys = set()
        self._lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.split("?")[0].endswith("/models"):
                    return self._json(200, {"object": "list", "data": [
                        {"id": "grok-4.6", "object": "model", "created": 0, "owned_by": "mock"}]})
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    return self._json(400, {"error": {"message": "invalid JSON"}})
                path = self.path.split("?")[0]
                with mock._lock:
                    mock.requests.append({"path": path, "headers": dict(self.headers), "body": body})
                key = self.headers.get("x-api-key") or self.headers.get("authorization", "").removeprefix("Bearer ")
                if key in mock.rate_limited_keys:
                    # A key at its rate limit, as providers answer it (a pool moves to the next).
                    self.send_response(429)
                    self.send_header("retry-after", "30")
                    data = json.dumps({"type": "error", "error": {"type": "rate_limit_error",
                                                                  "message": "rate limited"}}).encode()
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    return self.wfile.write(data)
                if path.endswith("/messages/count_tokens"):
                    return self._json(200, {"input_tokens": 42})
                if path.endswith("/messages"):
                    return mock._anthropic(self, body)
                if path.endswith("/chat/completions"):
                    return mock._chat(self, body)
                if path.endswith("/responses"):
                    return mock._responses(self, body)
                if path.endswith((":generateContent", ":streamGenerateContent")):
                    return mock._gemini(self, path, body)
                self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})

            def _json(self, status, value):
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events, named: bool):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for event in events:
                    data = event if isinstance(event, str) else json.dumps(event)
                    prefix = f"event: {event['type']}\n" if named and isinstance(event, dict) else ""
                    self.wfile.write(f"{prefix}data: {data}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def generations(self, path_suffix: str):
        """Requests to one generation path, in order."""
        with self._lock:
            return [r for r in self.requests if r["path"].endswith(path_suffix)]

    # ---------- Anthropic Messages ----------

    def _anthropic(self, handler, body):
        for index, message in enumerate(body.get("messages", [])):
            if message.get("role") not in ("user", "assistant"):
                return handler._json(400, {"type": "error", "error": {
                    "type": "invalid_request_error",
                    "message": f"messages.{index}.role: Input should be 'user' or 'assistant'"}})
            for block_index, block in enumerate(message.get("content") or []):
                if isinstance(block, dict) and block.get("type") == "thinking" \
                        and not str(block.get("signature", "")).startswith(ANTHROPIC_SIGNATURE):
                    return handler._json(400, {"type": "error", "error": {
                        "type": "invalid_request_error",
                        "message": f"messages.{index}.content.{block_index}: Invalid `signature` in `thinking` block"}})
        decision = decide("anthropic", body)
        if decision[0] == "refuse":
            return handler._json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": decision[1]}, "request_id": "req_mock"})
        model = body.get("model", "claude-mock")
        message_id = "msg_" + uuid.uuid4().hex[:16]
        blocks = []
        if body.get("thinking", {}).get("type") in ("enabled", "adaptive"):
            blocks.append({"type": "thinking", "thinking": "Thinking it over.",
                           "signature": ANTHROPIC_SIGNATURE + uuid.uuid4().hex})
        if decision[0] == "tool":
            blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:16],
                           "name": decision[1], "input": decision[2]})
            stop = "tool_use"
        else:
            blocks.append({"type": "text", "text": decision[1]})
            stop = "end_turn"
        usage = {"input_tokens": 30, "output_tokens": 12, "cache_read_input_tokens": 0,
                 "cache_creation_input_tokens": 0}
        if not body.get("stream"):
            return handler._json(200, {"id": message_id, "type": "message", "role": "assistant",
                                       "model": model, "content": blocks, "stop_reason": stop,
                                       "stop_sequence": None, "usage": usage})
        events = [{"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=1)}}]
        for index, block in enumerate(blocks):
            if block["type"] == "thinking":
                events += [
                    {"type": "content_block_start", "index": index,
                     "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
                    {"type": "content_block_delta", "index": index,
                     "delta": {"type": "thinking_delta", "thinking": block["thinking"]}},
                    {"type": "content_block_delta", "index": index,
                     "delta": {"type": "signature_delta", "signature": block["signature"]}}]
            elif block["type"] == "text":
                events += [
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                    {"type": "content_block_delta", "index": index,
                     "delta": {"type": "text_delta", "text": block["text"]}}]
            else:
                events += [
                    {"type": "content_block_start", "index": index, "content_block": dict(block, input={})},
                    {"type": "content_block_delta", "index": index,
                     "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}]
            events.append({"type": "content_block_stop", "index": index})
        events += [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 12}},
                   {"type": "message_stop"}]
        handler._sse(events, named=True)

    # ---------- OpenAI chat completions ----------

    def _chat(self, handler, body):
        decision = decide("chat", body)
        if decision[0] == "refuse":
            return handler._json(400, {"error": {"message": decision[1], "type": "invalid_request_error",
                                                 "param": None, "code": "unsupported_parameter"}})
        model = body.get("model", "grok-mock")
        message = {"role": "assistant", "content": None}
        if self.reasoning:
            message["reasoning_content"] = "Considering the request."
        if decision[0] == "tool":
            message["tool_calls"] = [{"id": "call_" + uuid.uuid4().hex[:16], "type": "function",
                                      "function": {"name": decision[1], "arguments": json.dumps(decision[2])}}]
            finish = "tool_calls"
        else:
            message["content"] = decision[1]
            finish = "stop"
        usage = {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}
        if not body.get("stream"):
            return handler._json(200, {"id": "chatcmpl-mock", "object": "chat.completion", "created": 1,
                                       "model": model, "usage": usage, "choices": [
                                           {"index": 0, "message": message, "finish_reason": finish}]})

        def chunk(delta, finish_reason=None):
            return {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        events = [chunk({"role": "assistant", "content": ""})]
        if "reasoning_content" in message:
            events.append(chunk({"reasoning_content": message["reasoning_content"]}))
        if message["content"]:
            events.append(chunk({"content": message["content"]}))
        for index, call in enumerate(message.get("tool_calls", [])):
            events.append(chunk({"tool_calls": [dict(call, index=index)]}))
        events.append(chunk({}, finish))
        events.append({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1,
                       "model": model, "choices": [], "usage": usage})
        events.append("[DONE]")
        handler._sse(events, named=False)

    # ---------- OpenAI Responses ----------

    def _responses(self, handler, body):
        items = body.get("input") if isinstance(body.get("input"), list) else []
        for item in items:
            encrypted = item.get("encrypted_content") if isinstance(item, dict) else None
            if item.get("type") == "reasoning" and encrypted and not encrypted.startswith(RESPONSES_ENCRYPTED):
                return handler._json(400, {"error": {
                    "message": "The encrypted content for item " + str(item.get("id")) + " could not be verified.",
                    "type": "invalid_request_error", "param": None, "code": "invalid_encrypted_content"}})
        decision = decide("responses", body)
        if decision[0] == "refuse":
            return handler._json(400, {"error": {"message": decision[1], "type": "invalid_request_error",
                                                 "param": None, "code": "unsupported_parameter"}})
        model = body.get("model", "resp-mock")
        response_id = "resp_" + uuid.uuid4().hex[:16]
        output = []
        if "reasoning.encrypted_content" in (body.get("include") or []):
            output.append({"type": "reasoning", "id": "rs_" + uuid.uuid4().hex[:16], "summary": [],
                           "encrypted_content": RESPONSES_ENCRYPTED + uuid.uuid4().hex})
        if decision[0] == "tool":
            output.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16],
                           "call_id": "call_" + uuid.uuid4().hex[:16], "name": decision[1],
                           "arguments": json.dumps(decision[2]), "status": "completed"})
        else:
            output.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:16], "status": "completed",
                           "role": "assistant",
                           "content": [{"type": "output_text", "text": decision[1], "annotations": []}]})
        usage = {"input_tokens": 30, "output_tokens": 12, "total_tokens": 42,
                 "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
        response = {"id": response_id, "object": "response", "created_at": 1, "status": "completed",
                    "model": model, "output": output, "usage": usage}
        if not body.get("stream"):
            return handler._json(200, response)
        sequence = iter(range(1000))
        events = [{"type": "response.created", "sequence_number": next(sequence),
                   "response": dict(response, status="in_progress", output=[], usage=None)}]
        for index, item in enumerate(output):
            events.append({"type": "response.output_item.added", "sequence_number": next(sequence),
                           "output_index": index, "item": item})
            if item["type"] == "message":
                text = item["content"][0]["text"]
                events.append({"type": "response.output_text.delta", "sequence_number": next(sequence),
                               "item_id": item["id"], "output_index": index, "content_index": 0, "delta": text})
                events.append({"type": "response.output_text.done", "sequence_number": next(sequence),
                               "item_id": item["id"], "output_index": index, "content_index": 0, "text": text})
            events.append({"type": "response.output_item.done", "sequence_number": next(sequence),
                           "output_index": index, "item": item})
        events.append({"type": "response.completed", "sequence_number": next(sequence), "response": response})
        handler._sse(events, named=True)

    # ---------- Gemini generateContent ----------

    def _gemini(self, handler, path, body):
        for tool_index, tool in enumerate(body.get("tools") or []):
            for index, declaration in enumerate(tool.get("functionDeclarations", [])):
                fault = gemini_schema_fault(declaration.get("parameters"),
                                            f"tools[{tool_index}].function_declarations[{index}].parameters")
                if fault:
                    return handler._json(400, {"error": {"code": 400, "message": "Invalid JSON payload received. "
                                                         + fault, "status": "INVALID_ARGUMENT"}})
        decision = decide("gemini", body)
        if decision[0] == "refuse":
            return handler._json(400, {"error": {"code": 400, "message": decision[1], "status": "INVALID_ARGUMENT"}})
        model = path.rsplit("/", 1)[-1].split(":")[0]
        if decision[0] == "tool":
            part = {"functionCall": {"name": decision[1], "args": decision[2]},
                    "thoughtSignature": GEMINI_SIGNATURE}
        else:
            part = {"text": decision[1]}
        reply = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 12, "totalTokenCount": 42},
                 "modelVersion": model, "responseId": uuid.uuid4().hex[:16]}
        if path.endswith(":generateContent"):
            return handler._json(200, reply)
        handler._sse([reply], named=False)
