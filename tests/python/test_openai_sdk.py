"""The official `openai` Python SDK as a client of `corvid serve`."""

import openai
import pytest


def client(corvid, **kwargs):
    return openai.OpenAI(base_url=corvid["url"] + "/v1", api_key="client-dummy-key", max_retries=0, **kwargs)


def test_chat_non_streamed(corvid):
    reply = client(corvid).chat.completions.create(
        model="supergrok", messages=[{"role": "user", "content": "hello"}])
    assert reply.choices[0].message.content == "Hello from the mock."
    assert reply.usage.total_tokens == 17
    sent = corvid["mock"].requests()[-1]
    assert sent["body"]["model"] == "grok-4.6"
    assert sent["headers"]["authorization"] == "Bearer sk-upstream-test"


def test_chat_streamed_with_usage(corvid):
    stream = client(corvid).chat.completions.create(
        model="grok", messages=[{"role": "user", "content": "hello"}],
        stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from the mock."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 17


def test_legacy_completions_fim(corvid):
    corvid["mock"].enqueue("/v1/responses", 200, {
        "id": "resp_1", "object": "response", "status": "completed", "model": "grok-4.6",
        "output": [{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "a + b"}]}],
        "usage": {"input_tokens": 30, "output_tokens": 3}})
    reply = client(corvid).completions.create(
        model="supergrok", prompt="<|fim_prefix|>fn add(a, b) {\n    <|fim_suffix|>\n}<|fim_middle|>",
        max_tokens=64, stop=["<|endoftext|>"])
    assert reply.object == "text_completion"
    assert reply.choices[0].text == "a + b"
    assert reply.usage.total_tokens == 33
    sent = corvid["mock"].requests()[-1]
    assert sent["path"] == "/v1/responses"
    assert sent["body"]["store"] is False
    assert sent["body"]["input"] == "fn add(a, b) {\n    <CURSOR>\n}"


def test_responses_streamed_and_not(corvid):
    c = client(corvid)
    reply = c.responses.create(model="grok", input="hi")
    assert reply.output_text == "Hello from the mock."
    events = list(c.responses.create(model="grok", input="hi", stream=True))
    assert events[-1].type == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Hello from the mock."


def test_models_list(corvid):
    ids = {m.id for m in client(corvid).models.list()}
    assert {"supergrok", "grok", "grok-4.6"} <= ids


def test_upstream_errors_reach_the_sdk_as_typed_errors(corvid):
    corvid["mock"].enqueue("/v1/chat/completions", 400, {"code": "invalid", "error": "bad request from xAI"})
    with pytest.raises(openai.BadRequestError) as caught:
        client(corvid).chat.completions.create(model="grok", messages=[{"role": "user", "content": "x"}])
    assert "bad request from xAI" in str(caught.value)
    for _ in range(3):
        corvid["mock"].enqueue("/v1/chat/completions", 429, {"error": "slow down"}, {"retry-after": "0"})
    with pytest.raises(openai.RateLimitError):
        client(corvid).chat.completions.create(model="grok", messages=[{"role": "user", "content": "x"}])


def test_sdk_streaming_error_surfaces(corvid):
    corvid["mock"].enqueue("/v1/chat/completions", 503, {"error": "overloaded"}, {"retry-after": "0"})
    corvid["mock"].enqueue("/v1/chat/completions", 503, {"error": "overloaded"}, {"retry-after": "0"})
    corvid["mock"].enqueue("/v1/chat/completions", 503, {"error": "overloaded"}, {"retry-after": "0"})
    with pytest.raises(openai.InternalServerError) as caught:
        list(client(corvid).chat.completions.create(
            model="grok", messages=[{"role": "user", "content": "x"}], stream=True))
    assert "overloaded" in str(caught.value)
