"""A Zed account's hosted models through corvid, with the official SDKs: the openai SDK on a
Zed Anthropic model and the anthropic SDK on a Zed xAI model, streamed, with a tool call."""

import json

import anthropic
import openai

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_openai_sdk_on_a_zed_anthropic_model(corvid_with_zed):
    client = openai.OpenAI(base_url=corvid_with_zed["url"] + "/v1", api_key="any", max_retries=0)
    stream = client.chat.completions.create(
        model="zed/claude-sonnet-4-6", stream=True,
        messages=[{"role": "user", "content": "weather in Paris?"}],
        tools=[{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}])
    name, arguments, finish = None, "", None
    for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for call in choice.delta.tool_calls or []:
                name = call.function.name or name
                arguments += call.function.arguments or ""
    assert name == "get_weather"
    assert json.loads(arguments) == {"city": "Paris"}
    assert finish == "tool_calls"


def test_anthropic_sdk_on_a_zed_xai_model(corvid_with_zed):
    client = anthropic.Anthropic(base_url=corvid_with_zed["url"], api_key="any", max_retries=0)
    with client.messages.stream(
            model="zed/grok-4", max_tokens=1024,
            messages=[{"role": "user", "content": "weather in Paris?"}],
            tools=[{"name": "get_weather", "input_schema": SCHEMA}]) as stream:
        message = stream.get_final_message()
    tool_uses = [block for block in message.content if block.type == "tool_use"]
    assert message.stop_reason == "tool_use"
    assert tool_uses and tool_uses[0].name == "get_weather"
    assert tool_uses[0].input == {"city": "Paris"}


def test_zed_models_are_listed(corvid_with_zed):
    client = openai.OpenAI(base_url=corvid_with_zed["url"] + "/v1", api_key="any", max_retries=0)
    ids = {model.id for model in client.models.list()}
    assert "zed/claude-sonnet-4-6" in ids and "zed/grok-4" in ids
