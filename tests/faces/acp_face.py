"""ACP's driver: `corvid acp` spawned by the Python `agent-client-protocol` client (a client
nobody here wrote), one session, the user's
lines as prompts, questions answered as permission requests. Its disconnect scenario speaks
raw JSON-RPC, so the client can vanish mid-question."""

import asyncio
import contextlib
import json
import subprocess
from pathlib import Path

import acp
from acp.schema import AllowedOutcome, RequestPermissionResponse

from common import CORVID, clean_env

OPTION = {"approve": "allow_once", "reject": "reject_once"}


def _env(home, mock):
    return clean_env(CORVID_HOME=home, CORVID_UPSTREAM=mock.base_url, XAI_API_KEY="sk-upstream-test",
                     CORVID_DEFAULT_MODEL="grok", NO_COLOR="1")


def _text_of(content):
    """The words of ACP tool call content (text blocks; a diff shows its path and new text)."""
    words = []
    for item in content or []:
        inner = getattr(item, "content", None)
        if inner is not None and getattr(inner, "text", None):
            words.append(inner.text)
        elif getattr(item, "new_text", None) is not None:
            words.append(f"{item.path}\n{item.new_text}")
    return "\n".join(words)


class Client:
    """The client side: every update kept, permission requests answered when the test says."""

    def __init__(self):
        self.updates = []
        self.permissions = []
        self.asked = asyncio.Event()
        self.decision = None

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append((tool_call, options))
        self.decision = asyncio.get_running_loop().create_future()
        self.asked.set()
        option, feedback = await self.decision
        # "Reject with feedback": the user's words in the answer's `_meta.feedback`.
        meta = {"feedback": feedback} if feedback else None
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=option, outcome="selected"), field_meta=meta)

    async def session_update(self, session_id, update, **kwargs):
        assert getattr(update, "field_meta", None) is None, f"corvid-specific _meta: {update}"
        self.updates.append(update)

    def shown(self, since=0):
        words = []
        for update in self.updates[since:]:
            kind = getattr(update, "session_update", None)
            if kind == "agent_message_chunk":
                words.append(update.content.text)
            elif kind in ("tool_call", "tool_call_update"):
                words.append(update.title or "")
                words.append(_text_of(update.content))
        return "\n".join(words)


class AcpFace:
    name = "acp"

    async def start(self, mock, home, project):
        self.home, self.mock, self.project = home, mock, project
        self.client = Client()
        self.stack = contextlib.AsyncExitStack()
        self.conn, self.process = await self.stack.enter_async_context(
            acp.spawn_agent_process(self.client, CORVID, "acp", env=_env(home, mock), cwd=str(project)))
        await self.conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        session = await self.conn.new_session(cwd=str(project), mcp_servers=[])
        self.session = session.session_id

    def log_text(self):
        return ""

    async def set_policy(self, policy):
        await self.conn.set_config_option(config_id="mode", session_id=self.session, value=policy)

    async def say(self, line):
        self.client.asked.clear()
        self.mark = len(self.client.updates)
        self.turn = asyncio.create_task(self.conn.prompt(session_id=self.session, prompt=[acp.text_block(line)]))

    async def proposal(self):
        asked = asyncio.create_task(self.client.asked.wait())
        done, _ = await asyncio.wait({asked, self.turn}, timeout=20, return_when=asyncio.FIRST_COMPLETED)
        assert asked in done, f"no permission request; the prompt ended with {self.turn.result() if self.turn in done else 'nothing'}"
        tool_call, options = self.client.permissions[-1]
        notices = [line[2:] for line in _text_of(tool_call.content).splitlines() if line.startswith("⚠ ")]
        always = [option.name for option in options if option.kind == "allow_always"]
        return {"title": tool_call.title, "notice": notices[0] if notices else None, "kind": tool_call.kind,
                "always": always[0] if always else None,
                "diff": any(getattr(item, "type", None) == "diff" for item in tool_call.content or []),
                "options": [option.kind for option in options]}

    async def answer(self, decision, feedback=None):
        self.client.decision.set_result((OPTION[decision], feedback))

    async def cancel(self):
        await self.conn.cancel(session_id=self.session)

    async def settled(self, turn, outcome):
        answer = await asyncio.wait_for(self.turn, 30)
        assert answer.stop_reason == {"completed": "end_turn", "cancelled": "cancelled"}[outcome], answer

    async def shown(self):
        """What the client was shown since the last prompt."""
        return self.client.shown(self.mark)

    async def questions(self):
        return len(self.client.permissions)

    def calls(self, call_id):
        """The `tool_call`s announcing `call_id` (the kind comes with the complete one)."""
        return [u for u in self.client.updates
                if getattr(u, "session_update", None) == "tool_call" and u.tool_call_id == call_id]

    async def disconnect_mid_approval(self, step, mock, project):
        """The client vanishes (its pipes closed) while a permission request waits: `corvid acp`
        ends promptly, runs nothing, and a new client loads the session and goes on in it."""
        process = subprocess.Popen([CORVID, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, env=_env(self.home, mock), cwd=str(project), text=True)
        ids = iter(range(1, 100))
        sent_before = len(mock.chat_requests())

        def request(method, params):
            process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}) + "\n")
            process.stdin.flush()

        def until_line(check):
            for line in process.stdout:
                message = json.loads(line)
                assert "_meta" not in json.dumps(message.get("params", {}).get("update", {})), message
                if check(message):
                    return message
            raise AssertionError("corvid acp closed its output")

        request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        until_line(lambda m: m.get("id") == 1)
        request("session/new", {"cwd": str(project), "mcpServers": []})
        session = until_line(lambda m: m.get("id") == 2)["result"]["sessionId"]
        request("session/set_config_option", {"sessionId": session, "configId": "mode", "value": step["policy"]})
        until_line(lambda m: m.get("id") == 3)
        mock.enqueue(step["model"][:1])
        request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": step["say"]}]})
        asked = until_line(lambda m: m.get("method") == "session/request_permission")
        first = asked["params"]["toolCall"]["title"]
        # The client goes away: both pipes closed, never answering.
        process.stdin.close()
        process.stdout.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            raise AssertionError("corvid acp kept running after its client left mid-question")
        assert not Path(project, step["marker"]).exists(), "ran without an answer"
        # A second client: the session loads, and a new prompt in it is answered.
        mock.enqueue([{"text": "still here"}])
        client = Client()
        async with acp.spawn_agent_process(client, CORVID, "acp", env=_env(self.home, mock),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            await conn.load_session(cwd=str(project), session_id=session, mcp_servers=[])
            answer = await asyncio.wait_for(conn.prompt(session_id=session, prompt=[acp.text_block("are you there?")]), 30)
            assert answer.stop_reason == "end_turn", answer
            assert "still here" in client.shown(), client.shown()
        assert not Path(project, step["marker"]).exists(), "ran without an answer"
        # Nobody answered, so the model was never told the user said no.
        told = json.dumps([r.get("body") for r in (await mock.all_taken())[sent_before:]])
        assert "user rejected" not in told, "a vanished client's question became a rejection"
        return {"first": {"title": first}, "answered_by": "nobody (the process ended); a second client went on"}

    async def close(self):
        await self.stack.aclose()

