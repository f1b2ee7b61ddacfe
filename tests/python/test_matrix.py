"""The official SDKs — openai (chat and responses), anthropic (messages, streamed, with tool
use) and google-genai — as clients of `corvid serve`, each against a mock upstream of every
provider kind (xAI/OpenAI-compatible chat, Anthropic, Gemini, OpenAI Responses)."""

import json

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors, types

from upstream_scripts import ARGS, PROVIDERS, enqueue_tool_call, upstream_path as path_for

PROVIDER_NAMES = list(PROVIDERS)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def model_of(provider):
    return PROVIDERS[provider][0]


def upstream_path(corvid):
    return corvid["mock"].requests()[-1]["path"]


def expected_path(provider, stream, client="chat"):
    return path_for(provider, client, stream)


# ---------- OpenAI chat completions ----------

def openai_client(corvid):
    return openai.OpenAI(base_url=corvid["url"] + "/v1", api_key="client-key", max_retries=0)


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_openai_chat_text(corvid, provider):
    reply = openai_client(corvid).chat.completions.create(
        model=model_of(provider), messages=[{"role": "user", "content": "hello"}])
    assert reply.choices[0].message.content == "Hello from the mock."
    assert reply.usage.total_tokens > 0
    assert upstream_path(corvid) == expected_path(provider, False)


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_openai_chat_streamed_tool_call(corvid, provider):
    enqueue_tool_call(corvid["mock"], provider, stream=True)
    stream = openai_client(corvid).chat.completions.create(
        model=model_of(provider), stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "weather in Paris?"}],
        tools=[{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": SCHEMA}}])
    chunks = list(stream)
    calls = {}
    finish = None
    for chunk in chunks:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": None, "arguments": ""})
                if call.function and call.function.name:
                    entry["name"] = call.function.name
                if call.function and call.function.arguments:
                    entry["arguments"] += call.function.arguments
    assert finish == "tool_calls"
    assert calls[0]["name"] == "get_weather"
    assert json.loads(calls[0]["arguments"]) == ARGS
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
    assert upstream_path(corvid) == expected_path(provider, True)


# ---------- OpenAI Responses ----------

@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_openai_responses_tool_call(corvid, provider):
    enqueue_tool_call(corvid["mock"], provider, stream=False, client="responses")
    reply = openai_client(corvid).responses.create(
        model=model_of(provider), input="weather in Paris?",
        tools=[{"type": "function", "name": "get_weather", "description": "Weather", "parameters": SCHEMA}])
    calls = [item for item in reply.output if item.type == "function_call"]
    assert calls and calls[0].name == "get_weather"
    assert json.loads(calls[0].arguments) == ARGS
    assert upstream_path(corvid) == expected_path(provider, False, client="responses")


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_openai_responses_streamed_text(corvid, provider):
    events = list(openai_client(corvid).responses.create(model=model_of(provider), input="hi", stream=True))
    assert events[-1].type == "response.completed"
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "Hello from the mock."


# ---------- Anthropic messages ----------

def anthropic_client(corvid):
    return anthropic.Anthropic(base_url=corvid["url"], api_key="client-key", max_retries=0)


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_anthropic_streamed_tool_use(corvid, provider):
    enqueue_tool_call(corvid["mock"], provider, stream=True)
    with anthropic_client(corvid).messages.stream(
            model=model_of(provider), max_tokens=1024,
            messages=[{"role": "user", "content": "weather in Paris?"}],
            tools=[{"name": "get_weather", "description": "Weather", "input_schema": SCHEMA}]) as stream:
        message = stream.get_final_message()
    tool_uses = [block for block in message.content if block.type == "tool_use"]
    assert message.stop_reason == "tool_use"
    assert tool_uses and tool_uses[0].name == "get_weather"
    assert tool_uses[0].input == ARGS
    assert message.usage.output_tokens > 0
    assert upstream_path(corvid) == expected_path(provider, True)


@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_anthropic_text(corvid, provider):
    message = anthropic_client(corvid).messages.create(
        model=model_of(provider), max_tokens=256, messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].text == "Hello from the mock."
    assert message.stop_reason == "end_turn"


def test_anthropic_tool_result_round_trip(corvid):
    """A second turn carrying the tool result reaches an OpenAI-compatible upstream as a tool message."""
    anthropic_client(corvid).messages.create(
        model="grok-4.6", max_tokens=256,
        tools=[{"name": "get_weather", "input_schema": SCHEMA}],
        messages=[
            {"role": "user", "content": "weather in Paris?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": ARGS}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C, sunny", "is_error": False}]},
        ])
    sent = corvid["mock"].requests()[-1]["body"]
    tool_messages = [m for m in sent["messages"] if m["role"] == "tool"]
    assert tool_messages == [{"role": "tool", "tool_call_id": "toolu_1", "content": "18C, sunny"}]


# ---------- Google Gemini ----------

# google-genai 3 defaults to `v1`; `v1beta` is still what older clients and the REST docs use.
API_VERSIONS = ["v1", "v1beta"]


def genai_client(corvid, api_version=None):
    return genai.Client(api_key="client-key", http_options=types.HttpOptions(
        base_url=corvid["url"], api_version=api_version))


def test_genai_defaults_to_v1(corvid):
    """The SDK's own default (no api_version): corvid must serve it."""
    client = genai_client(corvid)
    reply = client.models.generate_content(model="gemini-2.5-pro", contents="hi")
    assert reply.text == "Hello from the mock."
    assert corvid["mock"].requests()[-1]["path"] == "/v1/models/gemini-2.5-pro:generateContent"


def weather_tool():
    return types.Tool(function_declarations=[types.FunctionDeclaration(
        name="get_weather", description="Weather", parameters_json_schema=SCHEMA)])


@pytest.mark.parametrize("api_version", API_VERSIONS)
@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_genai_tool_call(corvid, provider, api_version):
    enqueue_tool_call(corvid["mock"], provider, stream=False)
    client = genai_client(corvid, api_version)  # keep it alive: a dropped Client closes its HTTP connection
    reply = client.models.generate_content(
        model=model_of(provider), contents="weather in Paris?",
        config=types.GenerateContentConfig(
            tools=[weather_tool()],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))
    calls = reply.function_calls
    assert calls and calls[0].name == "get_weather"
    assert dict(calls[0].args) == ARGS
    assert reply.usage_metadata.prompt_token_count > 0
    assert upstream_path(corvid) == expected_path(provider, False)


@pytest.mark.parametrize("api_version", API_VERSIONS)
@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_genai_streamed_text(corvid, provider, api_version):
    client = genai_client(corvid, api_version)
    chunks = list(client.models.generate_content_stream(model=model_of(provider), contents="hi"))
    assert "".join(chunk.text or "" for chunk in chunks) == "Hello from the mock."


@pytest.mark.parametrize("api_version", API_VERSIONS)
def test_genai_models_list(corvid, api_version):
    client = genai_client(corvid, api_version)
    names = [model.name for model in client.models.list()]
    assert any(name.endswith("grok-4.6") for name in names), names


@pytest.mark.parametrize("api_version", API_VERSIONS)
def test_genai_errors_are_googles_own(corvid, api_version):
    """A Gemini 429 reaches the SDK as Gemini wrote it — its `details` (RetryInfo) intact."""
    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "45s"}]
    path = "/v1/models/gemini-2.5-pro:generateContent"
    corvid["mock"].enqueue(path, 429, {"error": {"code": 429, "message": "quota exhausted",
                                                 "status": "RESOURCE_EXHAUSTED", "details": details}})
    client = genai_client(corvid, api_version)
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model="gemini-2.5-pro", contents="hi")
    assert caught.value.code == 429
    assert caught.value.status == "RESOURCE_EXHAUSTED"
    assert caught.value.details["error"]["details"] == details
    assert len([r for r in corvid["mock"].requests() if r["path"] == path]) == 1, "a 45 s hint is not waited out"


def test_genai_unknown_method_is_answered_in_googles_shape(corvid):
    client = genai_client(corvid)
    with pytest.raises(errors.ClientError) as caught:
        client.models.embed_content(model="gemini-2.5-pro", contents="hi")
    assert caught.value.code == 404
    assert caught.value.status == "NOT_FOUND"


@pytest.mark.parametrize("api_version", API_VERSIONS)
def test_genai_models_get(corvid, api_version):
    client = genai_client(corvid, api_version)
    model = client.models.get(model="grok-4.6")
    assert model.name == "models/grok-4.6"
    # Issue 22 item 6: the window and capabilities from corvid's catalog, in Gemini's fields.
    assert model.input_token_limit == 256_000
    assert model.thinking is True


def test_openai_models_retrieve(corvid):
    model = openai_client(corvid).models.retrieve("grok-4.6")
    assert model.id == "grok-4.6"
    extra = model.model_extra
    assert extra["context_window"] == 256_000
    assert extra["pricing"]["input"] == 2.0 and extra["pricing"]["output"] == 6.0
    assert extra["capabilities"] == {"tools": True, "images": True, "reasoning": True}
    with pytest.raises(openai.NotFoundError):
        openai_client(corvid).models.retrieve("no-such-model")


def test_anthropic_models_retrieve(corvid):
    model = anthropic_client(corvid).models.retrieve("grok-4.6").to_dict()
    assert model["id"] == "grok-4.6"
    assert model["max_input_tokens"] == 256_000


# ---------- opaque reasoning through a client that types it as bytes ----------

@pytest.mark.parametrize("api_version", API_VERSIONS)
def test_genai_on_a_thinking_claude_model_round_trips_the_signature(corvid, api_version):
    """google-genai types `thoughtSignature` as bytes (pydantic refuses text that is not
    base64): Anthropic's signature reaches it inside corvid's envelope, base64-encoded, and
    comes back to Anthropic as the signature it was."""
    mock = corvid["mock"]
    mock.enqueue("/v1/messages", 200, {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Paris, then.", "signature": "EqQBsig_with+odd/chars=="},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": ARGS}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 8}})
    client = genai_client(corvid, api_version)
    config = types.GenerateContentConfig(
        tools=[weather_tool()],
        thinking_config=types.ThinkingConfig(thinking_budget=1024, include_thoughts=True),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    first = client.models.generate_content(
        model="claude-sonnet-4-5", contents="weather in Paris?", config=config)
    parts = first.candidates[0].content.parts
    thought = next(part for part in parts if part.thought)
    assert isinstance(thought.thought_signature, bytes) and thought.thought_signature
    call = next(part for part in parts if part.function_call)
    contents = [
        types.Content(role="user", parts=[types.Part(text="weather in Paris?")]),
        first.candidates[0].content,
        types.Content(role="user", parts=[types.Part.from_function_response(
            name=call.function_call.name, response={"output": "sunny"})]),
    ]
    second = client.models.generate_content(model="claude-sonnet-4-5", contents=contents, config=config)
    assert second.text == "Hello from the mock."
    sent = mock.requests()[-1]["body"]
    assistant = next(message for message in sent["messages"] if message["role"] == "assistant")
    assert assistant["content"][0] == {
        "type": "thinking", "thinking": "Paris, then.", "signature": "EqQBsig_with+odd/chars=="}, sent


def test_openai_chat_on_a_thinking_claude_model_keeps_the_signed_thinking(corvid):
    """Chat Completions has no field for Anthropic's signed thinking: it rides in the tool
    call's id, and the next turn (thinking on, in a tool loop) gets it back before the call, as
    Anthropic requires."""
    mock = corvid["mock"]
    mock.enqueue("/v1/messages", 200, {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "Paris, then.", "signature": "EqQBsig+/=="},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": ARGS}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 8}})
    client = openai_client(corvid)
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": SCHEMA}}]
    messages = [{"role": "user", "content": "weather in Paris?"}]
    first = client.chat.completions.create(
        model="claude-sonnet-4-5", messages=messages, tools=tools, reasoning_effort="high")
    message = first.choices[0].message
    call = message.tool_calls[0]
    assert call.function.name == "get_weather"
    messages.append(message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})
    second = client.chat.completions.create(
        model="claude-sonnet-4-5", messages=messages, tools=tools, reasoning_effort="high")
    assert second.choices[0].message.content == "Hello from the mock."
    sent = mock.requests()[-1]["body"]
    assert sent.get("thinking"), sent
    assistant = sent["messages"][1]
    assert assistant["content"][0] == {
        "type": "thinking", "thinking": "Paris, then.", "signature": "EqQBsig+/=="}, sent
    assert assistant["content"][1]["id"] == "toolu_1"
    assert sent["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"


def test_openai_embeddings_pass_through(corvid):
    """`/v1/embeddings` through the openai SDK (its default base64 encoding included)."""
    import base64
    import struct
    vector = [0.25, -0.5, 1.0]
    encoded = base64.b64encode(struct.pack("<3f", *vector)).decode()
    corvid["mock"].enqueue("/v1/embeddings", 200, {
        "object": "list", "model": "text-embedding-3-small",
        "data": [{"object": "embedding", "index": 0, "embedding": encoded}],
        "usage": {"prompt_tokens": 2, "total_tokens": 2}})
    reply = openai_client(corvid).embeddings.create(model="openai/text-embedding-3-small", input="hello")
    assert reply.data[0].embedding == vector
    assert reply.usage.prompt_tokens == 2
    sent = corvid["mock"].requests()[-1]
    assert sent["path"] == "/v1/embeddings"
    assert sent["body"]["model"] == "text-embedding-3-small"
