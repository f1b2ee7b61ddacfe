"""`corvid acp` driven end to end by a client nobody here wrote: the Python
`agent-client-protocol` package (its `spawn_agent_process` and client side), against the mock
model on loopback. Initialize, a new session, a prompt with streamed updates, a permission
request answered, the file changed, a cancel mid-turn, the session loaded again; and, over a raw
pipe, malformed frames and unknown methods answered with JSON-RPC errors while the process keeps
serving; an image block reaching the model, and refused for a text-only model."""

import asyncio
import json
import subprocess
import tempfile
from pathlib import Path

import acp
import pytest
from acp.schema import AllowedOutcome, ClientCapabilities, DeniedOutcome, FileSystemCapabilities, RequestPermissionResponse

from conftest import TARGET, _clean_env

CHAT = "/v1/chat/completions"


def _chunk(delta, finish=None):
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


_USAGE = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "grok-4.6", "choices": [],
          "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}}


def _tool_call(mock, call_id, name, arguments):
    mock._call("POST", "/__mock/enqueue", {"path": CHAT, "status": 200, "sse": [
        _chunk({"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": call_id, "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}]}),
        _chunk({}, "tool_calls"), _USAGE, "[DONE]"]})


def _text(mock, text):
    mock._call("POST", "/__mock/enqueue", {"path": CHAT, "status": 200, "sse": [
        _chunk({"role": "assistant", "content": text}), _chunk({}, "stop"), _USAGE, "[DONE]"]})


class Recorder:
    """The client side: records updates and permission requests, answers permissions."""

    def __init__(self, answer="allow_once"):
        self.updates = []
        self.permissions = []
        self.answer = answer
        self.asked = asyncio.Event()

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append((tool_call, options))
        self.asked.set()
        if self.answer is None:
            # Hold the question until the turn is cancelled; then answer as the protocol asks.
            await asyncio.sleep(3600)
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=self.answer, outcome="selected"))

    async def session_update(self, session_id, update, **kwargs):
        self.updates.append(update)

    def of(self, kind):
        return [u for u in self.updates if getattr(u, "session_update", None) == kind]


def _env(home, mock):
    return _clean_env(CORVID_HOME=home, CORVID_UPSTREAM=mock.base_url, XAI_API_KEY="sk-upstream-test",
                      CORVID_DEFAULT_MODEL="grok", NO_COLOR="1")


def _run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 90))


@pytest.fixture
def project():
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        (root / ".git").mkdir()
        (root / "lib.rs").write_text("fn add(a: i32, b: i32) -> i32 { a - b }\n")
        yield root


@pytest.fixture
def home():
    with tempfile.TemporaryDirectory() as folder:
        yield folder


def test_a_session_prompts_asks_edits_cancels_and_loads_again(mock_upstream, project, home):
    _tool_call(mock_upstream, "call_1", "edit", {"path": "lib.rs", "old_string": "a - b", "new_string": "a + b"})
    _text(mock_upstream, "Fixed it.")
    _tool_call(mock_upstream, "call_2", "bash", {"command": "sleep 30"})
    corvid = str(TARGET / "corvid")

    async def first():
        client = Recorder()
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION,
                                         client_capabilities=ClientCapabilities())
            assert init.protocol_version == 1
            assert init.agent_capabilities.load_session is True
            methods = init.model_dump(by_alias=True, exclude_none=True)["authMethods"]
            assert methods[0]["type"] == "terminal" and methods[0]["args"] == ["login", "xai"], methods
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            answer = await conn.prompt(session_id=session.session_id, prompt=[acp.text_block("make add add")])
            assert answer.stop_reason == "end_turn"
            calls = client.of("tool_call")
            # The first announcement is the call being written (its kind is never guessed from
            # the name); the complete call (a `tool_call` with the same id, which replaces it)
            # brings the kind the tool was offered with.
            assert calls[0].tool_call_id == "call_1"
            kinds = [c.kind for c in calls if c.tool_call_id == "call_1" and c.kind]
            assert kinds and kinds[0] == "edit", kinds
            tool_call, options = client.permissions[0]
            assert tool_call.status == "pending" and tool_call.raw_input["new_string"] == "a + b"
            # The proposal's own diff and the engine's title, the same words in every face.
            assert tool_call.content[0].type == "diff" and "a + b" in tool_call.content[0].new_text
            assert tool_call.title == "Edit lib.rs", tool_call.title
            assert [option.kind for option in options] == ["allow_once", "allow_always", "allow_always", "allow_always",
                                                           "reject_once", "reject_always", "reject_always"]
            ids = [option.option_id for option in options]
            assert ids[2:4] == ["allow_always_project", "allow_always_user"], ids
            assert ids[5:] == ["reject_always_project", "reject_always_user"], ids
            statuses = [u.status for u in client.of("tool_call_update")]
            assert statuses[-1] == "completed", statuses
            said = "".join(u.content.text for u in client.of("agent_message_chunk"))
            assert "Fixed it." in said
            assert (project / "lib.rs").read_text() == "fn add(a: i32, b: i32) -> i32 { a + b }\n"
            names = [c.name for c in client.of("available_commands_update")[0].available_commands]
            assert {"init", "compact", "undo", "diff"} <= set(names)

            # A cancel mid-turn: the running command is stopped and the prompt says cancelled.
            await conn.set_config_option(config_id="mode", session_id=session.session_id, value="full-auto")
            turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[acp.text_block("wait")]))
            while not any(c.tool_call_id == "call_2" for c in client.of("tool_call")):
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)
            await conn.cancel(session_id=session.session_id)
            answer = await asyncio.wait_for(turn, 20)
            assert answer.stop_reason == "cancelled"

            listed = await conn.list_sessions(cwd=str(project))
            assert listed.sessions[0].session_id == session.session_id
            return session.session_id

    session_id = _run(first())

    async def second():
        client = Recorder()
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            await conn.load_session(cwd=str(project), session_id=session_id, mcp_servers=[])
            users = [u.content.text for u in client.of("user_message_chunk")]
            assert users[:2] == ["make add add", "wait"], users
            assert client.of("tool_call")[0].tool_call_id == "call_1"

    _run(second())


def test_a_permission_waiting_when_the_turn_is_cancelled_ends_it(mock_upstream, project, home):
    _tool_call(mock_upstream, "call_1", "bash", {"command": "mkdir -p never-made"})
    corvid = str(TARGET / "corvid")

    async def run():
        client = Recorder(answer=None)
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[acp.text_block("go")]))
            await asyncio.wait_for(client.asked.wait(), 20)
            tool_call, _options = client.permissions[0]
            assert tool_call.title == "Run mkdir -p never-made" and tool_call.kind == "execute"
            await conn.cancel(session_id=session.session_id)
            answer = await asyncio.wait_for(turn, 20)
            assert answer.stop_reason == "cancelled"
            assert not (project / "never-made").exists()

    _run(run())


def test_malformed_frames_and_unknown_methods_get_errors_and_serving_goes_on(mock_upstream, home):
    process = subprocess.Popen([str(TARGET / "corvid"), "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=_env(home, mock_upstream), text=True)
    try:
        def exchange(line):
            process.stdin.write(line + "\n")
            process.stdin.flush()
            return json.loads(process.stdout.readline())

        early = exchange(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}))
        assert early["id"] == 1 and early["error"]["code"] == -32600, early  # before initialize
        garbage = exchange("this is not json")
        assert garbage["error"]["code"] == -32700, garbage
        init = exchange(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "initialize",
                                    "params": {"protocolVersion": 1, "clientCapabilities": {}}}))
        assert init["id"] == 2 and init["result"]["protocolVersion"] == 1, init
        unknown = exchange(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "corvid/nothing", "params": {}}))
        assert unknown["id"] == 5 and unknown["error"]["code"] == -32601, unknown
        garbage = exchange('{"jsonrpc": "2.0", "id": 6, "method": ')
        assert garbage["error"]["code"] == -32700, garbage
        bad = exchange(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": 7}}))
        assert bad["id"] == 3 and bad["error"]["code"] == -32602, bad
        listed = exchange(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {}}))
        assert listed["id"] == 4 and "result" in listed, listed
    finally:
        process.stdin.close()
        process.wait(timeout=15)


def test_commands_of_the_one_table_and_read_only_from_the_client(mock_upstream, project, home):
    _tool_call(mock_upstream, "call_1", "write", {"path": "one.txt", "content": "one\n"})
    _text(mock_upstream, "Wrote it.")
    _tool_call(mock_upstream, "call_2", "write", {"path": "two.txt", "content": "two\n"})
    _text(mock_upstream, "Wrote two.")
    _tool_call(mock_upstream, "call_3", "write", {"path": "one.txt", "content": "gone\n"})
    _text(mock_upstream, "Read-only, so I did not.")
    corvid = str(TARGET / "corvid")

    async def run():
        client = Recorder()
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            sid = session.session_id
            await conn.set_config_option(config_id="mode", session_id=sid, value="full-auto")
            for text in ("write one", "write two"):
                answer = await conn.prompt(session_id=sid, prompt=[acp.text_block(text)])
                assert answer.stop_reason == "end_turn"
            said = lambda: "".join(u.content.text for u in client.of("agent_message_chunk"))
            # `/diff 1` and `/undo 2`: the protocol's parser, answered by the reply.
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("/diff 1")])
            assert answer.stop_reason == "end_turn"
            assert "Turn 1:" in said() and "+one" in said(), said()
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("/undo 2")])
            assert answer.stop_reason == "end_turn"
            assert not (project / "two.txt").exists() and (project / "one.txt").exists()
            refused = None
            try:
                await conn.prompt(session_id=sid, prompt=[acp.text_block("/undo two")])
            except Exception as error:  # noqa: BLE001 (the client's error type is its own)
                refused = error
            assert refused is not None, "a command with a bad argument was taken"
            # Read-only is the engine's policy: the write is refused without a question.
            asked = len(client.permissions)
            await conn.set_config_option(config_id="mode", session_id=sid, value="read-only")
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("overwrite one")])
            assert answer.stop_reason == "end_turn"
            assert (project / "one.txt").read_text() == "one\n"
            assert len(client.permissions) == asked

    _run(run())


def test_custom_commands_are_offered_expanded_and_picked_up_when_written(mock_upstream, home):
    """A project's `.claude/commands` file with `$ARGUMENTS` and `!`git status``: offered in the
    available commands, its command line asks for permission, the model gets the expansion; a
    Gemini command written during the session is offered and runs on the next prompt."""
    _text(mock_upstream, "Reviewed.")
    _text(mock_upstream, "Planned.")
    corvid = str(TARGET / "corvid")
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder).resolve()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        (project / "fresh.rs").write_text("fn main() {}\n")
        commands = project / ".claude" / "commands"
        commands.mkdir(parents=True)
        (commands / "review.md").write_text(
            "---\ndescription: review the work\nargument-hint: <focus>\n---\n"
            "Review $ARGUMENTS.\n!`git status --short`\n")

        async def run():
            client = Recorder()
            async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                               cwd=str(project)) as (conn, _process):
                await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
                session = await conn.new_session(cwd=str(project), mcp_servers=[])
                sid = session.session_id
                for _ in range(100):  # the update follows the session's answer
                    if client.of("available_commands_update"):
                        break
                    await asyncio.sleep(0.05)
                offered = {c.name: c for c in client.of("available_commands_update")[0].available_commands}
                assert "review" in offered, list(offered)
                assert offered["review"].description == "review the work"
                assert offered["review"].input.root.hint == "<focus>"

                answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("/review the parser")])
                assert answer.stop_reason == "end_turn"
                tool_call, _options = client.permissions[0]
                assert tool_call.raw_input["command"] == "git status --short", tool_call
                sent = mock_upstream.requests()[-1]["body"]["messages"][-1]["content"]
                assert "Review the parser." in sent and "?? fresh.rs" in sent, sent

                gemini = project / ".gemini" / "commands"
                gemini.mkdir(parents=True)
                (gemini / "plan.toml").write_text('description = "plan it"\nprompt = "Plan: {{args}}"\n')
                answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("/plan the split")])
                assert answer.stop_reason == "end_turn"
                latest = client.of("available_commands_update")[-1].available_commands
                assert "plan" in [c.name for c in latest]
                sent = mock_upstream.requests()[-1]["body"]["messages"][-1]["content"]
                assert sent.endswith("Plan: the split"), sent

        _run(run())


def test_rewind_and_fork_are_commands_answered_in_the_thread(mock_upstream, project, home):
    """`/rewind` lists your messages, `/rewind 2` takes the conversation back before the second
    (the model no longer sees it), `/fork 1` makes a new conversation."""
    _text(mock_upstream, "First answer.")
    _text(mock_upstream, "Second answer.")
    _text(mock_upstream, "Third answer.")
    corvid = str(TARGET / "corvid")

    async def run():
        client = Recorder()
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            sid = session.session_id
            for text in ("first question", "second question"):
                answer = await conn.prompt(session_id=sid, prompt=[acp.text_block(text)])
                assert answer.stop_reason == "end_turn"
            said = lambda: "".join(u.content.text for u in client.of("agent_message_chunk"))
            await conn.prompt(session_id=sid, prompt=[acp.text_block("/rewind")])
            assert "1. first question" in said() and "2. second question" in said(), said()
            await conn.prompt(session_id=sid, prompt=[acp.text_block("/rewind 2")])
            assert "Rewound: 1 of your messages" in said() and "> second question" in said(), said()
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("another question")])
            assert answer.stop_reason == "end_turn"
            sent = mock_upstream.requests()[-1]["body"]["messages"]
            users = [m["content"] for m in sent if m["role"] == "user"]
            assert users == ["first question", "another question"], users
            await conn.prompt(session_id=sid, prompt=[acp.text_block("/fork 1")])
            assert "Forked into a new conversation" in said(), said()

    _run(run())

def test_plan_mode_refuses_changes_and_an_approved_plan_is_carried_out(mock_upstream, project, home):
    _tool_call(mock_upstream, "call_1", "write", {"path": "x", "content": "made\n"})
    _tool_call(mock_upstream, "call_2", "bash", {"command": "touch x"})
    _tool_call(mock_upstream, "call_3", "present_plan", {"plan": "# Make x\n\n1. Write `x`."})
    _tool_call(mock_upstream, "call_4", "write", {"path": "x", "content": "made\n"})
    _text(mock_upstream, "x is written.")
    corvid = str(TARGET / "corvid")

    async def run():
        client = Recorder()
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            sid = session.session_id
            modes = [mode.id for mode in session.modes.available_modes]
            assert "plan" in modes, modes
            await conn.set_config_option(config_id="mode", session_id=sid, value="auto-edit")
            await conn.set_session_mode(session_id=sid, mode_id="plan")
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("make x")])
            assert answer.stop_reason == "end_turn"
            # One question only: the plan, with its text; the write and `touch x` never asked.
            plan_call, options = client.permissions[0]
            assert plan_call.title == "Carry out this plan?", plan_call.title
            assert "Make x" in plan_call.content[0].content.text
            assert [option.name for option in options] == ["Approve the plan and carry it out",
                                                           "Edit the plan (send your version as the next message)",
                                                           "Keep planning"]
            # Approved, the plan ran under auto-edit (no question for the write), in the same turn.
            assert len(client.permissions) == 1, client.permissions
            assert (project / "x").read_text() == "made\n"
            current = [u.current_mode_id for u in client.of("current_mode_update")]
            assert current and current[-1] == "auto-edit", current

    _run(run())
    results = [m.get("content", "") for r in mock_upstream.requests() for m in r["body"]["messages"]
               if m.get("role") == "tool"]
    assert any("in plan mode" in text for text in results), results
    assert any("read-only" in text for text in results), results

def test_always_saved_to_the_project_and_slash_permissions_lists_and_removes(mock_upstream, project, home):
    _tool_call(mock_upstream, "call_1", "write", {"path": "one.txt", "content": "one\n"})
    _tool_call(mock_upstream, "call_2", "write", {"path": "two.txt", "content": "two\n"})
    _text(mock_upstream, "Wrote both.")
    corvid = str(TARGET / "corvid")

    async def run():
        client = Recorder(answer="allow_always_project")
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            sid = session.session_id
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("write two files")])
            assert answer.stop_reason == "end_turn"
            # Saved and kept: the second write ran without a question.
            assert len(client.permissions) == 1, client.permissions
            assert (project / "two.txt").read_text() == "two\n"
            saved = json.loads((project / ".corvid" / "settings.json").read_text())
            assert saved["permissions"]["allow"] == ["Write"], saved
            said = lambda: "".join(u.content.text for u in client.of("agent_message_chunk"))
            await conn.prompt(session_id=sid, prompt=[acp.text_block("/permissions")])
            assert "1. allow Write — .corvid/settings.json" in said(), said()
            await conn.prompt(session_id=sid, prompt=[acp.text_block("/permissions remove 1")])
            assert "removed `Write` from .corvid/settings.json" in said(), said()
            saved = json.loads((project / ".corvid" / "settings.json").read_text())
            assert saved["permissions"]["allow"] == [], saved

    _run(run())


PNG_DOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_an_image_block_reaches_the_model_and_a_text_only_model_refuses_it(mock_upstream, project, home):
    _text(mock_upstream, "A dot.")
    corvid = str(TARGET / "corvid")

    async def prompt_with_image(model):
        client = Recorder()
        async with acp.spawn_agent_process(client, corvid, "acp",
                                           env={**_env(home, mock_upstream), "CORVID_DEFAULT_MODEL": model},
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            answer = await conn.prompt(session_id=session.session_id,
                                       prompt=[acp.text_block("what is this?"), acp.image_block(PNG_DOT, "image/png")])
            return answer, "".join(u.content.text for u in client.of("agent_message_chunk"))

    chats = lambda: [r for r in mock_upstream.requests() if r.get("path", "").endswith(CHAT)]
    answer, _ = _run(prompt_with_image("grok"))
    assert answer.stop_reason == "end_turn"
    user = [m for m in chats()[-1]["body"]["messages"] if m["role"] == "user"][-1]
    parts = [{k: v for k, v in part.items() if k in ("type", "image_url")} for part in user["content"]]
    assert {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_DOT}} in parts, user
    asked = len(chats())

    # grok-3 reads text only (the catalog says so): the prompt ends with the refusal in the
    # thread, and nothing is sent.
    answer, said = _run(prompt_with_image("grok-3"))
    assert answer.stop_reason == "end_turn"
    assert "grok-3 does not take images; pick one that does" in said, said
    assert len(chats()) == asked


def test_a_plan_is_edited_by_the_next_prompt_and_the_edited_plan_is_carried_out(mock_upstream, project, home):
    _tool_call(mock_upstream, "call_1", "present_plan", {"plan": "# Make x\n\n1. Write `x`."})
    _tool_call(mock_upstream, "call_2", "write", {"path": "y", "content": "made\n"})
    _text(mock_upstream, "y is written.")
    corvid = str(TARGET / "corvid")

    async def run():
        client = Recorder(answer="edit_plan")
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            sid = session.session_id
            await conn.set_config_option(config_id="mode", session_id=sid, value="auto-edit")
            await conn.set_session_mode(session_id=sid, mode_id="plan")
            said = lambda: "".join(u.content.text for u in client.of("agent_message_chunk"))
            # "Edit the plan" ends this prompt with the plan shown; the turn waits.
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("make x")])
            assert answer.stop_reason == "end_turn"
            assert "Send your version of the plan" in said() and "# Make x" in said(), said()
            assert not (project / "x").exists() and not (project / "y").exists()
            # The next prompt is the edited plan: approved as written, carried out in that turn.
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("# Make y\n\n1. Write `y`.")])
            assert answer.stop_reason == "end_turn"
            assert (project / "y").read_text() == "made\n"
            assert "y is written." in said(), said()
            assert len(client.permissions) == 1, client.permissions
            current = [u.current_mode_id for u in client.of("current_mode_update")]
            assert current and current[-1] == "auto-edit", current

    _run(run())
    bodies = [r["body"] for r in mock_upstream.requests()]
    results = [m.get("content", "") for m in bodies[1]["messages"] if m.get("role") == "tool"]
    assert any("Make y" in text for text in results), results
    users = [m.get("content", "") for b in bodies for m in b["messages"] if m.get("role") == "user"]
    assert not any("Make y" in str(text) for text in users), users


def test_never_saves_a_deny_rule_and_the_next_such_call_is_refused_without_asking(mock_upstream, project, home):
    _tool_call(mock_upstream, "call_1", "bash", {"command": "touch a.txt"})
    _tool_call(mock_upstream, "call_2", "bash", {"command": "touch b.txt"})
    _text(mock_upstream, "Gave up.")
    corvid = str(TARGET / "corvid")

    async def run():
        client = Recorder(answer="reject_always_project")
        async with acp.spawn_agent_process(client, corvid, "acp", env=_env(home, mock_upstream),
                                           cwd=str(project)) as (conn, _process):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            sid = session.session_id
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("touch two files")])
            assert answer.stop_reason == "end_turn"
            assert len(client.permissions) == 1, client.permissions
            assert not (project / "a.txt").exists() and not (project / "b.txt").exists()
            saved = json.loads((project / ".corvid" / "settings.json").read_text())
            assert saved["permissions"]["deny"] == ["Bash(touch:*)"], saved
            said = lambda: "".join(u.content.text for u in client.of("agent_message_chunk"))
            await conn.prompt(session_id=sid, prompt=[acp.text_block("/permissions add ask WebFetch")])
            assert "saved `WebFetch` to the ask list of .corvid/settings.json" in said(), said()

    _run(run())
