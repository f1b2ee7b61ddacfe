"""The same scripted scenarios through every face's real transport (issue 20): the page in
headless Chromium, ACP with the Python `agent-client-protocol` client, the terminal UI in tmux,
each against its own `corvid` process and mock model, all reading tests/scenarios/faces.json.

Checked per face: `/undo 2`, `/diff 1`, `/compact` and a skill command work; a question's title,
sandbox notice and "always" rule (compared across the faces: the very same strings); a rejection's feedback
reaches the model; a turn stopped mid-stream ends as cancelled; read-only refuses a
write and a writing command without asking, the model and the user are told, nothing is
written; an MCP tool named `edit` is an MCP call in ACP (not a file edit). Then a face that
leaves mid-question: the page's socket closes and a second tab answers; ACP's client vanishes
and `corvid acp` ends, a second client goes on in the session; the terminal goes away and
`corvid chat` ends, a new one goes on (never with a "no" made up in the user's name). Every frame the page received
validates against the published schema; ACP's updates carry no corvid-specific `_meta`.

Run: python tests/faces/run.py [page|acp|terminal ...] (after `cargo build --bins`; needs
chromium, tmux, and the Python packages of tests/python and tests/web)."""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from acp_face import AcpFace  # noqa: E402
from common import ROOT, SCENARIO, Mock, until  # noqa: E402
from page import PageFace  # noqa: E402
from terminal import TerminalFace  # noqa: E402

FACES = {"page": PageFace, "acp": AcpFace, "terminal": TerminalFace}
# Frame kinds the scenario cannot play without: the page's schema check must have seen them.
PAGE_FRAMES = {"protocol", "event:ready", "event:tool_call", "event:tool_result", "event:turn_finished",
               "event:undone", "event:compacted", "event:settings_changed", "reply:diff", "reply:undone",
               "reply:compacted", "reply:tool_servers"}


def configure(home, servers):
    """The user's config.toml: the scenario's MCP servers (Python scripts on the `mcp` SDK)."""
    config = "".join(f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
                     f"args = [{json.dumps(str(ROOT / script))}]\n" for name, script in servers.items())
    Path(home, "config.toml").write_text(config)


def make_project(folder, files):
    root = Path(folder).resolve()
    for path, text in files.items():
        Path(root, path).parent.mkdir(parents=True, exist_ok=True)
        Path(root, path).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def check_files(project, files, where):
    for path, expected in files.items():
        target = Path(project, path)
        found = target.read_text() if target.exists() else None
        assert found == expected, f"{where}: {path} is {found!r}, expected {expected!r}"


async def shows_all(face, needles):
    shown = (await face.shown()).lower()
    return all(needle.lower() in shown for needle in needles)


async def repeat(face, step):
    """A command said again until the face shows its words (an MCP server starts in the
    background)."""
    deadline = time.monotonic() + 30
    while True:
        await face.say(step["say"])
        await face.settled(step["turn"], "completed")
        await asyncio.sleep(0.3)
        if await shows_all(face, step["shows"]):
            return
        assert time.monotonic() < deadline, (face.name, step["say"], (await face.shown())[-2000:])
        await asyncio.sleep(0.5)


async def play(face, step, mock, project):
    """One step through one face; returns what its question showed, if it asked one."""
    where = f"{face.name}: {step['say']!r}"
    if step.get("repeat"):
        return await repeat(face, step)
    asked_before = await face.questions()
    sent_before = len(mock.chat_requests())
    mock.enqueue(step.get("model", []))
    await face.say(step["say"])
    shown = None
    if step.get("question"):
        shown = await face.proposal()
        if "title" in step:
            assert shown["title"] == step["title"], (where, shown)
        if step.get("notice"):
            assert shown["notice"], (where, "no sandbox notice", shown)
        if "mcp" in step:
            assert shown.get("kind") != "edit" and not shown.get("diff"), (where, "an MCP tool shown as a file edit", shown)
        await face.answer(step["question"], step.get("feedback"))
    if step.get("while"):
        # Shown while the model is still writing the call.
        async def preparing():
            return step["while"].lower() in (await face.shown()).lower()
        await until(preparing, 20, f"{where} to show {step['while']!r} while it streams")
    if step.get("cancel"):
        # Stopped once its first words are shown.
        async def started():
            return step["cancel"] in await face.shown()
        await until(started, 20, f"{where} to start")
        await face.cancel()
    await face.settled(step["turn"], "cancelled" if step.get("cancel") else "completed")
    # Everything the step's model requests said, as one lower-case text.
    sent = json.dumps([r.get("body") for r in (await mock.all_taken())[sent_before:]], ensure_ascii=False).lower()
    for needle in step.get("told", []):
        assert needle.lower() in sent, (where, f"the model was not told {needle!r}")
    for needle in step.get("not_told", []):
        assert needle.lower() not in sent, (where, f"the model was told {needle!r}")
    for needle in step.get("shows", []):
        async def seen(needle=needle):
            return needle.lower() in (await face.shown()).lower()
        try:
            await until(seen, 10, f"{where} to show {needle!r}")
        except AssertionError:
            print((await face.shown())[-3000:], file=sys.stderr)
            raise
    if step.get("question") is False:
        assert await face.questions() == asked_before, (where, "asked a question")
    check_files(project, step.get("files", {}), where)
    return shown


async def run_face(name, scenario):
    face = FACES[name]()
    mock = Mock()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as folder:
        project = make_project(folder, scenario["project"])
        configure(home, scenario.get("mcp_servers", {}))
        try:
            await face.start(mock, home, project)
            questions = []
            for step in scenario["steps"]:
                if name not in step.get("faces", FACES):
                    continue
                if "policy" in step:
                    await face.set_policy(step["policy"])
                    continue
                began = time.monotonic()
                shown = await play(face, step, mock, project)
                if os.environ.get("CORVID_FACES_SHOW"):
                    print(f"{name}: {step['say']!r} took {time.monotonic() - began:.1f}s")
                if shown and "faces" not in step:
                    questions.append({key: shown[key] for key in ("title", "notice", "always")})
                if "mcp" in step and hasattr(face, "calls"):
                    mcp_call(face, step)
            left = None
            if hasattr(face, "disconnect_mid_approval"):
                if name != "page":
                    # The processes started from here on need no MCP server. (Not for the page:
                    # `corvid serve` reloads an edited config.toml into a new app, whose tabs
                    # cannot see the question the old one still holds.)
                    configure(home, {})
                began = time.monotonic()
                left = await face.disconnect_mid_approval(scenario["disconnect"], mock, project)
                if os.environ.get("CORVID_FACES_SHOW"):
                    print(f"{name}: leaving mid-question took {time.monotonic() - began:.1f}s")
                assert left["first"]["title"] == scenario["disconnect"]["title"], left
            kinds = await face.frames() if hasattr(face, "frames") else None
            assert kinds is None or PAGE_FRAMES <= kinds, PAGE_FRAMES - kinds
            if os.environ.get("CORVID_FACES_SHOW"):
                print(f"--- {name} shows:\n{face.log_text()}")
            return {"questions": questions, "left": left, "frames": kinds, "seconds": time.monotonic() - started}
        except BaseException:
            print(f"--- {name} failed; its log:\n{face.log_text()}", file=sys.stderr)
            raise
        finally:
            await face.close()
            mock.close()


def mcp_call(face, step):
    """ACP's tool calls for the MCP `edit`: no announcement's kind is `edit` (ACP leaves out
    `other`, its default), and the title is the engine's line for the call."""
    call_id = "call_" + step["model"][0]["tool"]
    kinds = [call.kind or "other" for call in face.calls(call_id)]
    assert kinds and "edit" not in kinds, kinds
    titles = [call.title for call in face.calls(call_id)]
    assert any(title.startswith(f"{step['mcp']['server']}/{step['mcp']['tool']} ") for title in titles), titles


async def main(names):
    scenario = json.loads(Path(SCENARIO).read_text())
    for tool in ("tmux",):
        assert shutil.which(tool), f"{tool} is needed"
    results = {}
    for name in names:
        results[name] = await run_face(name, scenario)
        print(f"{name}: passed in {results[name]['seconds']:.1f}s; questions {results[name]['questions']}; "
              f"left mid-question: {results[name]['left']}")
        if results[name]["frames"]:
            print(f"{name}: frames valid against the schema: {sorted(results[name]['frames'])}")
    # The same question, the same words, in every face.
    shown = {name: result["questions"] for name, result in results.items()}
    assert len({json.dumps(questions, sort_keys=True) for questions in shown.values()}) == 1, shown
    print(f"faces test passed ({', '.join(names)})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(FACES)))
