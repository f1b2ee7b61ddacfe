"""The web page in a real headless chromium against `corvid serve` and a scripted mock model:
a message streams in; an edit approved from its diff card changes the file; a command denied
with feedback reaches the model (its card titled with the agent's words); `/diff 2`, `/undo 2`
and `/compact` parsed by the protocol's one command table; a write refused under read-only;
every frame received valid against the published schema; an image pasted and one dropped (one removed from its chip) reaching the model; a turn stopped with Esc; `/mcp` lists an MCP server; conversations switched; a second tab
that switches to another conversation while the first keeps its own (a session per tab); the
model and the default approval policy changed in settings; a key set and never shown again; a provider's last error on the
Status tab. Saves a screenshot of each step in
$CORVID_SCREENSHOTS (default target/web-screenshots).

Run: python tests/web/test_page.py (after `cargo build --bins`; needs /usr/bin/chromium and the
`websockets` package)."""

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cdp import Browser  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CORVID_TARGET_DIR")
              or Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug")
SHOTS = Path(os.environ.get("CORVID_SCREENSHOTS", ROOT / "target" / "web-screenshots"))
CHAT = "/v1/chat/completions"
SECRET = "sk-ant-browser-secret-7781"
# A 1×1 PNG.
PNG_DOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.upper().endswith("_PROXY") and not k.startswith(("CORVID_", "SUPERGROK_ZED_", "XAI_"))}
    env.update(extra)
    return env


def chunk(delta, finish=None):
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


USAGE = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
         "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}


def text_reply(pieces, delay_ms=0):
    return {"path": CHAT, "delay_ms": delay_ms, "sse": [
        chunk({"role": "assistant", "content": ""}),
        *[chunk({"content": piece}) for piece in pieces],
        chunk({}, "stop"), USAGE, "[DONE]"]}


def tool_reply(call_id, name, arguments):
    return {"path": CHAT, "sse": [
        chunk({"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": call_id, "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}]}),
        chunk({}, "tool_calls"), USAGE, "[DONE]"]}


class Mock:
    def __init__(self):
        self.process = subprocess.Popen([str(TARGET / "corvid-mock-upstream")], stdout=subprocess.PIPE,
                                        env=clean_env(), text=True)
        self.base_url = self.process.stdout.readline().strip()
        self.root = self.base_url.rsplit("/v1", 1)[0]

    def call(self, method, path, payload=None):
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.root + path, data=data, method=method,
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def enqueue(self, reply):
        self.call("POST", "/__mock/enqueue", {"status": 200, **reply})

    def chat_requests(self):
        return [r for r in self.call("GET", "/__mock/requests") if r.get("path", "").endswith(CHAT)]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_corvid(home, project, mock):
    Path(home, "env").write_text("XAI_API_KEY='sk-upstream-test'\n")
    # xAI's sign-in goes to the mock too (it has no OAuth routes: the sign-in fails, visibly).
    # One MCP server on the official Python SDK (this venv has it), for /mcp.
    fixture = ROOT / "tests" / "mcp" / "fixture_server.py"
    Path(home, "config.toml").write_text(
        f'xai_auth_url = "{mock.root}"\n\n[mcp_servers.fixture]\ncommand = {json.dumps(sys.executable)}\n'
        f'args = [{json.dumps(str(fixture))}, "serve"]\ndisabled_tools = ["crash"]\n')
    os.chmod(Path(home, "env"), 0o600)
    port = free_port()
    log = open(Path(home, "corvid.log"), "w")
    process = subprocess.Popen(
        [str(TARGET / "corvid"), "serve", "--port", str(port), "--project", str(project)],
        env=clean_env(CORVID_HOME=home, CORVID_UPSTREAM=mock.base_url, NO_COLOR="1"),
        stdout=subprocess.PIPE, stderr=log, text=True)
    deadline = time.monotonic() + 30
    for line in process.stdout:
        if "web page is at" in line:
            return process, line.split(" at ", 1)[1].strip()
        if time.monotonic() > deadline:
            break
    raise AssertionError("corvid serve printed no page URL:\n" + Path(home, "corvid.log").read_text())


async def send(browser, text):
    await browser.type("#input", text)
    await browser.key("Enter", key_code=13)


async def drawn(browser, tab):
    """Waits until the tab's latest drawing is in (the page marks a tab busy while it loads)."""
    await browser.wait_for(f"!document.querySelector('#{tab}').hasAttribute('aria-busy')", 10, f"the {tab} tab drawn")


async def turn_ends(browser, count, outcome="completed"):
    await browser.wait_for(f"document.querySelectorAll('.turn-end').length >= {count}", 30, f"turn {count} to end")
    last = await browser.evaluate("[...document.querySelectorAll('.turn-end')].pop().className")
    assert outcome in last, last


async def run(browser, mock, url, home, project):
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = lambda name: browser.screenshot(str(SHOTS / f"{name}.png"))

    # 1. The printed link: the token becomes a cookie, the page connects.
    await browser.navigate(url)
    await browser.wait_for("document.body.classList.contains('connected')", 20, "the page to connect")
    assert "token" not in await browser.evaluate("location.href"), "the token stays out of the address bar"
    assert await browser.evaluate("document.cookie") == "", "the cookie is HttpOnly"
    # The replay on connecting shows the conversation: the page asks for no switch of its own.
    await browser.wait_for("document.querySelectorAll('#conversations li.current').length === 1", 10, "the conversation list")
    assert not [f for f in browser.frames_sent() if "open_conversation" in f], browser.frames_sent()
    # The page reads the protocol version from the server's first frame (no constant of its own).
    hello = json.loads(browser.frames_received()[0])
    assert hello["type"] == "protocol" and hello["commands"], hello
    assert f'"version":{hello["version"]}' in "".join(browser.frames_sent()).replace(" ", "")

    # 2. A message streams in, rendered as markdown.
    mock.enqueue(text_reply(["Hello ", "from **the** ", "mock ", "model.\n\n", "- one\n", "- two\n"], delay_ms=300))
    await send(browser, "Say hello")
    await browser.wait_for("document.querySelector('.assistant')?.textContent.includes('from')", 20, "the first words")
    streaming = await browser.evaluate("document.querySelector('.assistant').textContent")
    await shot("01-streaming")
    await turn_ends(browser, 1)
    final = await browser.evaluate("document.querySelector('.assistant').textContent")
    assert len(final) > len(streaming), (streaming, final)
    assert await browser.evaluate("document.querySelector('.assistant strong')?.textContent") == "the"
    assert await browser.evaluate("document.querySelectorAll('.assistant li').length") == 2
    await shot("02-streamed")

    # 3. An edit approved from its diff card changes the file.
    mock.enqueue(tool_reply("call_edit", "edit", {"path": "notes.txt", "old_string": "colour = red", "new_string": "colour = blue"}))
    mock.enqueue(text_reply(["Changed the colour."]))
    # With the tab hidden and notifications allowed (a stand-in for the browser's), the approval
    # waiting and the turn's end are notified.
    await browser.evaluate("""(() => {
      window.__notes = [];
      window.Notification = class {
        static permission = "granted";
        static requestPermission() { return Promise.resolve("granted"); }
        constructor(title, options) { window.__notes.push(`${title}: ${options?.body ?? ""}`); }
        addEventListener() {}
        close() {}
      };
      Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
    })()""")
    await send(browser, "Make it blue")
    await browser.wait_for("document.querySelector('.proposal .diff .add')", 20, "the diff card")
    await browser.wait_for("window.__notes.some((n) => n.startsWith('corvid: approval needed'))", 10, "the approval notified")
    assert "colour = blue" in await browser.evaluate("document.querySelector('.proposal .diff .add').textContent")
    await shot("03-edit-proposal")
    assert Path(project, "notes.txt").read_text() == "colour = red\n"
    await browser.click_text(".proposal button", "Approve")
    await turn_ends(browser, 2)
    await browser.wait_for("window.__notes.some((n) => n.startsWith('corvid: turn completed'))", 10, "the turn's end notified")
    await browser.evaluate("delete document.hidden")
    assert Path(project, "notes.txt").read_text() == "colour = blue\n"
    await shot("04-edit-approved")

    # 4. A command denied with feedback: the feedback reaches the model.
    mock.enqueue(tool_reply("call_bash", "bash", {"command": "rm -rf build"}))
    mock.enqueue(text_reply(["Understood, I will not delete it."]))
    await send(browser, "Clean up")
    await browser.wait_for("[...document.querySelectorAll('.proposal:not(.closed) .command')].some(e => e.textContent === 'rm -rf build')", 20, "the command card")
    # The title is the agent's, the same words every face shows.
    title = await browser.evaluate("document.querySelector('.proposal:not(.closed) .proposal-title').textContent")
    assert title == "Run rm -rf build", title
    await browser.click_text(".proposal:not(.closed) button", "Deny with feedback")
    await browser.type(".proposal:not(.closed) .feedback", "keep the build folder")
    await shot("05-command-feedback")
    await browser.click_text(".proposal:not(.closed) button", "Deny with feedback")
    await turn_ends(browser, 3)
    last = mock.chat_requests()[-1]
    assert "keep the build folder" in json.dumps(last.get("body")), last
    await shot("06-command-denied")

    # 4b. Commands with arguments, parsed by the protocol's one table: /diff 2 shows the edit's
    # turn, /undo 2 puts the file back, /compact answers (here: nothing old enough, or a summary).
    asked = len(mock.chat_requests())
    await send(browser, "/diff 2")
    await browser.wait_for("document.querySelector('.diff-turn .diff .add')", 10, "the turn's diff")
    assert "colour = blue" in await browser.evaluate("document.querySelector('.diff-turn').textContent")
    await send(browser, "/undo 2")
    for _ in range(40):
        if Path(project, "notes.txt").read_text() == "colour = red\n":
            break
        await asyncio.sleep(0.25)
    assert Path(project, "notes.txt").read_text() == "colour = red\n"
    assert len(mock.chat_requests()) == asked, "/diff and /undo called the model"
    mock.enqueue(text_reply(["SUMMARY: the colour was changed, then put back."]))
    await send(browser, "/compact")
    await browser.wait_for("[...document.querySelectorAll('.notice')].some(n => /compact/i.test(n.textContent))", 20, "the compaction's answer")
    await shot("06b-diff-undo-compact")

    # 5. A turn stopped with Esc.
    mock.enqueue(text_reply([f"word{i} " for i in range(60)], delay_ms=250))
    await send(browser, "Write a long story")
    await browser.wait_for("[...document.querySelectorAll('.assistant')].pop().textContent.includes('word1')", 20, "the story to start")
    await browser.key("Escape", key_code=27)
    await turn_ends(browser, 4, "cancelled")
    await shot("07-stopped")

    # 5b. /mcp: the configured MCP server, its state and tools, without a model call.
    asked = len(mock.chat_requests())
    await send(browser, "/mcp")
    await browser.wait_for("document.querySelector('.tool-servers .server-state.ready')", 20, "the MCP server list")
    listed = await browser.evaluate("document.querySelector('.tool-servers').textContent")
    assert "fixture" in listed and "ready, " in listed and "echo" in listed, listed
    assert "not offered (enabled_tools/disabled_tools): crash" in listed, listed
    assert "repo-tools" in listed and "not trusted yet" in listed, listed
    await shot("07b-mcp")
    # Trusted from the page: it starts at once, and the trust is kept.
    await browser.click(".tool-servers button.trust")
    await browser.wait_for("document.querySelectorAll('.tool-servers').length >= 2", 10, "the answer to the trust")
    for _ in range(60):
        await send(browser, "/mcp")
        await asyncio.sleep(0.5)
        last = await browser.evaluate("[...document.querySelectorAll('.tool-servers')].pop().textContent")
        if "repo-toolsready" in last.replace(" ", ""):
            break
    assert "repo-tools ready, " in last, last
    assert "repo-tools" in Path(home, "mcp-trust.json").read_text()
    assert len(mock.chat_requests()) == asked, "/mcp called the model"
    await shot("07c-mcp-trusted")

    # 5c. Read-only from the selector: a write is refused by the agent itself, without a card.
    await browser.evaluate("(() => { const p = document.querySelector('#policy'); p.value = 'read-only'; p.dispatchEvent(new Event('change')); })()")
    mock.enqueue(tool_reply("call_ro", "write", {"path": "notes.txt", "content": "gone\n"}))
    mock.enqueue(text_reply(["It is read-only."]))
    before = Path(project, "notes.txt").read_text()
    cards = await browser.evaluate("document.querySelectorAll('.proposal:not(.closed)').length")
    await send(browser, "Overwrite the notes")
    await turn_ends(browser, 5)
    assert Path(project, "notes.txt").read_text() == before
    assert await browser.evaluate("document.querySelectorAll('.proposal:not(.closed)').length") == cards
    await browser.evaluate("(() => { const p = document.querySelector('#policy'); p.value = 'ask'; p.dispatchEvent(new Event('change')); })()")

    # 5d. Images: one pasted, one dropped (synthetic events carrying a PNG file), the dropped one
    # removed from its chip; the pasted one reaches the model as an image part.
    await browser.evaluate("""(() => {
      const file = (name) => new File([Uint8Array.from(atob('%s'), c => c.charCodeAt(0))], name, { type: 'image/png' });
      const carrying = (name) => { const data = new DataTransfer(); data.items.add(file(name)); return data; };
      document.querySelector('#input').dispatchEvent(new ClipboardEvent('paste', { clipboardData: carrying('pasted.png'), bubbles: true, cancelable: true }));
      document.querySelector('#composer').dispatchEvent(new DragEvent('drop', { dataTransfer: carrying('dropped.png'), bubbles: true, cancelable: true }));
    })()""" % PNG_DOT)
    await browser.wait_for("document.querySelectorAll('#attachments .image-chip').length === 2", 10, "two image chips")
    await shot("07d-image-chips")
    await browser.evaluate("document.querySelector('#attachments .image-chip[title=\"dropped.png\"] .chip-remove').click()")
    mock.enqueue(text_reply(["A dot."]))
    await send(browser, "What is this?")
    await turn_ends(browser, 6)
    assert await browser.evaluate("document.querySelector('#attachments').hidden"), "the tray empties on sending"
    content = mock.chat_requests()[-1]["body"]["messages"][-1]["content"]
    images = [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]
    assert images == ["data:image/png;base64," + PNG_DOT], content
    # For a model without image input the agent refuses, in its words; the image goes back to
    # the tray, and nothing is sent.
    asked = len(mock.chat_requests())
    await send(browser, "/model grok-3")
    for _ in range(100):
        if any('"model":"grok-3"' in f.replace(" ", "") for f in browser.frames_received()):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the model did not switch to grok-3")
    await browser.evaluate("""document.querySelector('#input').dispatchEvent(new ClipboardEvent('paste', { clipboardData: (() => { const d = new DataTransfer(); d.items.add(new File([Uint8Array.from(atob('%s'), c => c.charCodeAt(0))], 'again.png', { type: 'image/png' })); return d; })(), bubbles: true, cancelable: true }))""" % PNG_DOT)
    await browser.wait_for("document.querySelectorAll('#attachments .image-chip').length === 1", 10, "the chip")
    await send(browser, "And this?")
    await browser.wait_for("document.querySelector('#notices').textContent.includes('grok-3 does not take images')", 10, "the refusal")
    await browser.wait_for("document.querySelectorAll('#attachments .image-chip').length === 1", 10, "the image back in the tray")
    assert len(mock.chat_requests()) == asked
    # An error notice stays until it is dismissed (information fades after 6 s).
    await asyncio.sleep(6.5)
    refusal = "[...document.querySelectorAll('.notice.error')].find(n => n.textContent.includes('grok-3 does not take images'))"
    assert await browser.evaluate(f"!!{refusal}"), "the refusal faded"
    await browser.evaluate(f"{refusal}.querySelector('button.dismiss').click()")
    assert not await browser.evaluate(f"!!{refusal}"), "the refusal was not dismissed"
    await browser.evaluate("document.querySelector('#attachments .chip-remove').click()")
    await send(browser, "/model grok-4.6")

    # 6. Conversations: a new one, then back to the first (shown by a message sent after the
    # /compact above, which replaced the older turns with a summary).
    await browser.click("#new-conversation")
    await browser.wait_for("document.querySelectorAll('#messages > *').length === 0", 10, "an empty conversation")
    mock.enqueue(text_reply(["Second conversation here."]))
    await send(browser, "Second topic")
    await turn_ends(browser, 1)
    await browser.wait_for("document.querySelectorAll('#conversations li').length === 2", 10, "two conversations")
    await shot("08-second-conversation")
    await browser.click("#conversations li:not(.current) .open")
    await browser.wait_for("document.querySelector('#messages').textContent.includes('Overwrite the notes')", 10, "the first conversation's history")
    assert "Second topic" not in await browser.evaluate("document.querySelector('#messages').textContent")
    await shot("09-switched-back")

    # 6b. A second tab: it opens on the same conversation, switches to the other one and works
    # there, while the first tab keeps its own conversation (a session per tab).
    base = url.split("?", 1)[0]
    tab = await browser.new_tab(base)
    try:
        await tab.wait_for("document.body.classList.contains('connected')", 20, "the second tab to connect")
        await tab.wait_for("document.querySelector('#messages').textContent.includes('Overwrite the notes')", 10, "the second tab's replay")
        await tab.click("#conversations li:not(.current) .open")
        await tab.wait_for("document.querySelector('#messages').textContent.includes('Second topic')", 10, "the second tab's switch")
        mock.enqueue(text_reply(["Tab two answer."]))
        await send(tab, "Third message, in tab two")
        await turn_ends(tab, 1)
        await tab.bring_to_front()
        await tab.screenshot(str(SHOTS / "09b-second-tab.png"))
        await browser.bring_to_front()
        shown = await browser.evaluate("document.querySelector('#messages').textContent")
        assert "Overwrite the notes" in shown and "Second topic" not in shown and "Tab two" not in shown, shown
        mock.enqueue(text_reply(["Tab one answer."]))
        await send(browser, "Back in tab one")
        await turn_ends(browser, 1)
        assert "Tab one answer" not in await tab.evaluate("document.querySelector('#messages').textContent")
        await shot("09c-first-tab-kept")
    finally:
        await tab.close_tab()

    # 6c. Rewind and fork from a message's actions: "edit" takes the conversation back to
    # before "Back in tab one" (the message returns to the input); "fork" on "Overwrite the
    # notes" opens a new conversation holding what came before it.
    asked = len(mock.chat_requests())
    action = "[...document.querySelectorAll('#messages .user')].find(u => u.dataset.text === {text!r}).querySelector('[title^=\"{title}\"]').click()"
    await browser.evaluate(action.format(text="Back in tab one", title="go back to this message and edit"))
    await browser.wait_for("document.querySelector('#input').value === 'Back in tab one'", 10, "the message back in the input")
    await browser.wait_for("!document.querySelector('#messages').textContent.includes('Tab one answer')", 10, "the tail to leave")
    assert "Overwrite the notes" in await browser.evaluate("document.querySelector('#messages').textContent")
    await shot("09d-rewound")
    await browser.evaluate("document.querySelector('#input').value = ''")
    await browser.evaluate(action.format(text="Overwrite the notes", title="copy the conversation"))
    await browser.wait_for("document.querySelectorAll('#conversations li').length === 3", 10, "the fork in the list")
    await browser.wait_for("document.querySelector('#input').value === 'Overwrite the notes'", 10, "the forked message in the input")
    await browser.wait_for("!document.querySelector('#messages').textContent.includes('It is read-only')", 10, "the fork shown")
    assert len(mock.chat_requests()) == asked, "rewind and fork called the model"
    await browser.evaluate("document.querySelector('#input').value = ''")

    # 7. The model changed in settings.
    await browser.click("[data-tab=settings]")
    await browser.wait_for("document.querySelector('#default-model')", 10, "the settings page")
    await browser.evaluate("document.querySelector('#default-model').value = ''")
    await browser.type("#default-model", "grok-3-mini")
    await browser.click("#save-settings")
    await browser.wait_for("document.querySelector('#model').value === 'grok-3-mini'", 10, "the model picker to follow")
    assert 'default_model = "grok-3-mini"' in Path(home, "config.toml").read_text()
    await shot("10-settings-model")

    # 7b. The default approval policy saved: config.toml gets it, and this tab's session follows.
    await browser.wait_for("document.querySelector('#default-policy')?.value === 'ask'", 10, "the default policy")
    await browser.evaluate("document.querySelector('#default-policy').value = 'auto-edit'")
    await browser.click("#save-settings")
    await browser.wait_for("document.querySelector('#policy').value === 'auto-edit'", 10, "the session's policy to follow")
    assert 'approval = "auto-edit"' in Path(home, "config.toml").read_text()
    await browser.wait_for("document.querySelector('#default-policy')?.value === 'auto-edit'", 10, "the saved default shown")
    await browser.evaluate("document.querySelector('#default-policy').closest('label').scrollIntoView({block: 'center'})")
    await shot("10b-settings-default-policy")

    # 7c. Server and account settings round trip: written into config.toml by the one writer,
    # shown again after a reload of the tab, "in use now"; a port change says it needs a restart.
    # The Settings tab drawn afresh (7b's save redraws it too), earlier notices gone.
    await browser.click("[data-tab=status]")
    await browser.click("[data-tab=settings]")
    await drawn(browser, "settings")
    await browser.wait_for("document.querySelector('#general-log-prompts')", 10, "the server settings")
    await browser.evaluate("document.querySelectorAll('.notice').forEach((n) => n.remove())")
    await browser.evaluate("document.querySelector('#general-log-prompts').checked = true")
    await browser.evaluate("document.querySelector('#general-request-timeout').value = '300'")
    await browser.click("#save-settings")
    await browser.wait_for("[...document.querySelectorAll('.notice')].some(n => n.textContent.includes('in use now'))", 10, "saved and in use")
    written = Path(home, "config.toml").read_text()
    assert "log_prompts = true" in written and "request_timeout_s = 300" in written, written
    assert written.startswith('xai_auth_url = '), written
    await browser.click("[data-tab=status]")
    await browser.click("[data-tab=settings]")
    # The values are those of this drawing, not of the one 7c's save left (the same values).
    await drawn(browser, "settings")
    await browser.wait_for("document.querySelector('#general-log-prompts')?.checked === true"
                           " && document.querySelector('#general-request-timeout').value === '300'", 10, "the saved values shown")
    assert "loopback" in await browser.evaluate("document.querySelector('#general-loopback-rule').textContent")
    port_now = await browser.evaluate("document.querySelector('#general-port').value")
    await browser.evaluate(f"document.querySelector('#general-port').value = '{int(port_now) + 1}'")
    await browser.evaluate("document.querySelectorAll('.notice').forEach((n) => n.remove())")
    await browser.click("#save-settings")
    await browser.wait_for("[...document.querySelectorAll('.notice')].some(n => n.textContent.includes('next start'))", 10, "the restart note")
    await browser.evaluate("document.querySelector('#general-port').closest('label').scrollIntoView({block: 'center'})")
    await shot("10c-settings-server")
    # The page's tab was moved to the new settings (its socket closed with 1012) and reconnected.
    await browser.wait_for("document.body.classList.contains('connected')", 10, "the tab reconnected")

    # 8. A key set, and never shown again.
    await browser.type("[data-key=ANTHROPIC_API_KEY]", SECRET)
    await browser.click_text(".key:has([data-key=ANTHROPIC_API_KEY]) button", "Save")
    await browser.wait_for("document.querySelector('.key:has([data-key=ANTHROPIC_API_KEY]) .badge.ok')", 10, "the key to show as set")
    assert SECRET in Path(home, "env").read_text()
    html = await browser.evaluate("document.documentElement.outerHTML + [...document.querySelectorAll('input')].map(i => i.value).join()")
    assert SECRET not in html
    settings = await browser.evaluate("fetch('/api/settings').then(r => r.text())")
    assert SECRET not in settings and '"set":true' in settings.replace(" ", "")
    await shot("11-key-set")

    # 9. Status, usage, and the chat at phone width. First a request through the gateway that
    # the upstream fails, for the Status tab's last error.
    mock.call("POST", "/__mock/enqueue", {"status": 500, "path": CHAT, "body": {"error": {"message": "the upstream fell over", "type": "server_error"}}})
    gateway = base.rstrip("/") + CHAT
    failed = urllib.request.Request(gateway, data=json.dumps({"model": "grok-4", "messages": [{"role": "user", "content": "hi"}]}).encode(),
                                    method="POST", headers={"content-type": "application/json"})
    try:
        urllib.request.urlopen(failed, timeout=10)
        raise AssertionError("the gateway passed a failed upstream call on as a success")
    except urllib.error.HTTPError as error:
        assert error.code >= 500, error.code
    await browser.click("[data-tab=status]")
    # The provider's last failure: the mock answered 500 to a request through the gateway. The
    # Status tab was drawn before (7c), so wait for this drawing's row, not for any table.
    await browser.wait_for("[...document.querySelectorAll('#providers-status td.last-error')]"
                           ".some(e => e.textContent.includes('the upstream fell over'))", 10, "the provider's last failure")
    failure = await browser.evaluate("[...document.querySelectorAll('#providers-status td.last-error')].map(e => e.textContent).join()")
    assert "500" in failure and "the upstream fell over" in failure, failure
    # The page's agent runs in the configured sandbox: its `ready` carried the sandbox state.
    sandbox = await browser.evaluate("document.querySelector('#sandbox').textContent")
    assert re.match(r"agent sandbox: (enforced|unavailable|off) · \S", sandbox), sandbox
    await shot("12-status")
    # A sign-in started from the page shows its outcome (here the mock has no OAuth server: the
    # failure is shown, with the reason).
    await browser.click("[data-sign-in=xai]")
    await browser.wait_for("document.querySelector('#sign-in-progress .error')?.textContent.includes('sign-in failed')", 20, "the sign-in outcome")
    await shot("12b-sign-in")
    await browser.click("[data-tab=usage]")
    await browser.wait_for("document.querySelector('#usage h2')", 10, "the usage page")
    await shot("13-usage")
    await browser.size(390, 844, mobile=True)
    await browser.click("[data-tab=chat]")
    await shot("14-phone")
    # Every frame the page received is a frame of the published schema.
    import jsonschema  # noqa: PLC0415 (only this check needs it)
    schema = json.loads(await browser.evaluate("fetch('/api/agent/schema').then(r => r.text())"))
    schema.pop("anyOf", None)
    schema["$ref"] = "#/$defs/ServerFrame"
    validator = jsonschema.Draft202012Validator(schema)
    for frame in browser.frames_received():
        errors = [error.message for error in validator.iter_errors(json.loads(frame))]
        assert not errors, (frame, errors)
    # Nothing the page did broke the CSP.
    violations = [e for e in browser.events if e.get("method") == "Runtime.consoleAPICalled" and "Content Security Policy" in json.dumps(e)]
    assert not violations, violations

    # 15. The port saved in 7c waits for a restart: the notice that said so stayed, and its
    # "Restart now" stops corvid gracefully and starts it again in the same process on that port
    # (without the --port it was started with: the restart is asked for to apply the saved one);
    # the page moves there and is still let in (the same token, its cookie).
    new_port = int(port_now) + 1
    await browser.size(1280, 900)
    restart = "[...document.querySelectorAll('.notice')].find(n => n.textContent.includes('next start'))?.querySelector('button.restart-now')"
    await browser.wait_for(restart, 10, "the Restart now button")
    await browser.evaluate(f"{restart}.click()")
    await browser.wait_for(f"location.port === '{new_port}' && document.body.classList.contains('connected')", 40,
                           "the page reconnected on the new port")
    await shot("15-restarted")


async def main():
    mock = Mock()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as project:
        Path(project, "notes.txt").write_text("colour = red\n")
        # The project brings a server of its own: held until the user trusts it.
        Path(project, ".corvid").mkdir()
        Path(project, ".corvid", "mcp.json").write_text(json.dumps({"mcpServers": {"repo-tools": {
            "command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "fixture_server.py"), "serve"]}}}))
        subprocess.run(["git", "init", "-q", project], check=True)
        corvid, url = start_corvid(home, project, mock)
        browser = Browser(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
        try:
            await browser.attach()
            await run(browser, mock, url, home, project)
            print(f"web page test passed; screenshots in {SHOTS}")
        except BaseException:
            print(Path(home, "corvid.log").read_text()[-4000:], file=sys.stderr)
            try:
                await browser.screenshot(str(SHOTS / "failure.png"))
            except Exception:
                pass
            raise
        finally:
            try:
                await browser.close()
            finally:
                corvid.terminate()
                try:
                    corvid.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    corvid.kill()
                mock.process.kill()


if __name__ == "__main__":
    asyncio.run(main())
