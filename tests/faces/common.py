"""What every face's driver shares: the binaries, a clean environment, the mock model (the
`corvid-mock-upstream` process, scripted over HTTP) and the scenario's model replies as OpenAI
chat streams."""

import asyncio
import json
import os
import subprocess
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CORVID_TARGET_DIR")
              or Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug")
CORVID = str(TARGET / "corvid")
CHAT = "/v1/chat/completions"
SCENARIO = ROOT / "tests" / "scenarios" / "faces.json"


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.upper().endswith("_PROXY") and not k.startswith(("CORVID_", "SUPERGROK_ZED_", "XAI_"))}
    env.update(extra)
    return env


def _chunk(delta, finish=None):
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "grok",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


_USAGE = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "grok", "choices": [],
          "usage": {"prompt_tokens": 40, "completion_tokens": 10, "total_tokens": 50}}


def stream(reply):
    """A scenario reply (`{"text"}`, `{"pieces"}` streamed one by one, or `{"tool", "arguments"}`;
    `delay_ms` before each event) as the mock's SSE script."""
    if "text" in reply:
        events = [_chunk({"role": "assistant", "content": reply["text"]}), _chunk({}, "stop")]
    elif "pieces" in reply:
        events = [_chunk({"role": "assistant", "content": ""}),
                  *[_chunk({"content": piece}) for piece in reply["pieces"]], _chunk({}, "stop")]
    else:
        # `split`: the arguments arrive in that many pieces (a long call the model is writing).
        arguments = json.dumps(reply["arguments"])
        size = -(-len(arguments) // reply.get("split", 1))
        pieces = [arguments[at:at + size] for at in range(0, len(arguments), size)]
        call = {"index": 0, "id": reply.get("id", "call_" + reply["tool"]), "type": "function",
                "function": {"name": reply["tool"], "arguments": pieces[0]}}
        events = [_chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                  *[_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in pieces[1:]],
                  _chunk({}, "tool_calls")]
    return {"path": CHAT, "status": 200, "delay_ms": reply.get("delay_ms", 0), "sse": [*events, _USAGE, "[DONE]"]}


class Mock:
    """One mock model per face, so each face's requests are its own."""

    def __init__(self):
        self.process = subprocess.Popen([str(TARGET / "corvid-mock-upstream")], stdout=subprocess.PIPE,
                                        env=clean_env(), text=True)
        self.base_url = self.process.stdout.readline().strip()
        assert self.base_url.startswith("http://127.0.0.1:"), self.base_url
        self.root = self.base_url.rsplit("/v1", 1)[0]
        self.queued = 0

    def _call(self, method, path, payload=None):
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.root + path, data=data, method=method,
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def enqueue(self, replies):
        for reply in replies:
            self._call("POST", "/__mock/enqueue", stream(reply))
            self.queued += 1

    def chat_requests(self):
        return [r for r in self._call("GET", "/__mock/requests") if r.get("path", "").endswith(CHAT)]

    async def all_taken(self, timeout=10):
        """Waits until every queued reply was asked for (a step that skipped a model call, or
        made one too many, is caught here) and returns the requests."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            requests = self.chat_requests()
            if len(requests) >= self.queued or asyncio.get_running_loop().time() > deadline:
                assert len(requests) == self.queued, (len(requests), self.queued,
                                                      [json.dumps((r.get("body") or {}).get("messages", [])[-3:])[-900:] for r in requests[-3:]])
                return requests
            await asyncio.sleep(0.05)

    def close(self):
        self.process.kill()
        self.process.wait()


async def until(check, timeout, what):
    """Polls `check` (a coroutine function returning a truthy value) until it holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await check()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
