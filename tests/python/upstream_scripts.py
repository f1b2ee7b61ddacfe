"""Replies each mock provider kind gives for the matrix: a tool call `get_weather({"city": "Paris"})`,
streamed or whole, in that provider's own dialect."""

import json

ARGS = {"city": "Paris"}
ARGS_TEXT = json.dumps(ARGS)

# provider name -> (model to ask for, mock path, path for streams)
PROVIDERS = {
    "xai": ("grok-4.6", "/v1/chat/completions", "/v1/chat/completions"),
    "anthropic": ("claude-sonnet-4-5", "/v1/messages", "/v1/messages"),
    "gemini": ("gemini-2.5-pro", "/v1/models/gemini-2.5-pro:generateContent",
               "/v1/models/gemini-2.5-pro:streamGenerateContent"),
    "responses": ("resp/resp-model", "/v1/responses", "/v1/responses"),
}


def chat_tool_call(stream: bool):
    if not stream:
        return {"body": {
            "id": "c1", "object": "chat.completion", "created": 1, "model": "grok-4.6",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{"id": "call_1", "type": "function",
                                "function": {"name": "get_weather", "arguments": ARGS_TEXT}}]}}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}}}
    chunk = lambda delta, finish=None: {
        "id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    half = len(ARGS_TEXT) // 2
    return {"sse": [
        chunk({"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ARGS_TEXT[:half]}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ARGS_TEXT[half:]}}]}),
        chunk({}, "tool_calls"),
        {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6", "choices": [],
         "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}},
        "[DONE]"]}


def anthropic_tool_call(stream: bool):
    if not stream:
        return {"body": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": ARGS}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 8}}}
    half = len(ARGS_TEXT) // 2
    return {"framing": "event", "sse": [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                              "model": "claude-sonnet-4-5", "content": [], "stop_reason": None,
                                              "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ARGS_TEXT[:half]}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ARGS_TEXT[half:]}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 8}},
        {"type": "message_stop"}]}


def gemini_tool_call(stream: bool):
    reply = {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "get_weather", "args": ARGS}, "thoughtSignature": "c2lnbmF0dXJl"}]},
        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 8, "totalTokenCount": 28},
        "modelVersion": "gemini-2.5-pro"}
    return {"sse": [reply]} if stream else {"body": reply}


def responses_tool_call(stream: bool):
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
            "arguments": ARGS_TEXT, "status": "completed"}
    response = {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
                "model": "resp-model", "output": [item],
                "usage": {"input_tokens": 20, "output_tokens": 8, "total_tokens": 28}}
    if not stream:
        return {"body": response}
    return {"framing": "event", "sse": [
        {"type": "response.created", "sequence_number": 0,
         "response": dict(response, status="in_progress", output=[])},
        {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
         "item": dict(item, arguments="", status="in_progress")},
        {"type": "response.function_call_arguments.delta", "sequence_number": 2, "item_id": "fc_1",
         "output_index": 0, "delta": ARGS_TEXT},
        {"type": "response.function_call_arguments.done", "sequence_number": 3, "item_id": "fc_1",
         "output_index": 0, "arguments": ARGS_TEXT},
        {"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": item},
        {"type": "response.completed", "sequence_number": 5, "response": response}]}


TOOL_CALL = {"xai": chat_tool_call, "anthropic": anthropic_tool_call,
             "gemini": gemini_tool_call, "responses": responses_tool_call}


def upstream_dialect(provider: str, client: str) -> str:
    """xAI serves /responses too: a Responses client passes straight through to it."""
    if client == "responses" and provider == "xai":
        return "responses"
    return provider


def upstream_path(provider: str, client: str, stream: bool) -> str:
    if upstream_dialect(provider, client) == "responses":
        return "/v1/responses"
    _, path, stream_path = PROVIDERS[provider]
    return stream_path if stream else path


def enqueue_tool_call(mock, provider: str, stream: bool, client: str = "chat"):
    script = TOOL_CALL[upstream_dialect(provider, client)](stream)
    mock._call("POST", "/__mock/enqueue", dict(script, path=upstream_path(provider, client, stream), status=200))
