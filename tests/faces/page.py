"""The page's driver: `corvid serve` and the page in headless Chromium (tests/web/cdp.py), the
user's lines typed into its input, questions answered on their cards. Every WebSocket frame any
of its tabs received is checked against the schema the server publishes."""

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from common import CORVID, ROOT, clean_env, until

sys.path.insert(0, str(ROOT / "tests" / "web"))
from cdp import Browser  # noqa: E402

OPEN_CARD = ".proposal:not(.closed):not(.diff-turn)"


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PageFace:
    name = "page"

    async def start(self, mock, home, project):
        self.home = home
        Path(home, "env").write_text("XAI_API_KEY='sk-upstream-test'\n")
        os.chmod(Path(home, "env"), 0o600)
        self.log = open(Path(home, "corvid.log"), "w")
        self.corvid = subprocess.Popen(
            [CORVID, "serve", "--port", str(_free_port()), "--project", str(project)],
            env=clean_env(CORVID_HOME=home, CORVID_UPSTREAM=mock.base_url, NO_COLOR="1"),
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        deadline = time.monotonic() + 30
        self.url = None
        for line in self.corvid.stdout:
            if "web page is at" in line:
                self.url = line.split(" at ", 1)[1].strip()
                break
            if time.monotonic() > deadline:
                break
        assert self.url, "corvid serve printed no page URL:\n" + self.log_text()
        self.browser = Browser(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
        self.tabs = [self.browser]
        await self.browser.attach()
        await self.browser.navigate(self.url)
        await self.connected(self.browser)
        self.tab = self.browser

    def log_text(self):
        return Path(self.home, "corvid.log").read_text()[-4000:]

    async def connected(self, tab):
        await tab.wait_for("document.body.classList.contains('connected')", 20, "the page to connect")
        await tab.wait_for("document.querySelectorAll('#conversations li.current').length === 1", 10,
                           "the conversation list")

    async def set_policy(self, policy):
        await self.tab.evaluate(f"(() => {{ const p = document.querySelector('#policy'); p.value = {json.dumps(policy)}; p.dispatchEvent(new Event('change')); }})()")
        # The session's echo (`settings_changed`) sets the selector; wait for it.
        await self.tab.wait_for(f"document.querySelector('#policy').value === {json.dumps(policy)} && !document.querySelector('#input').disabled", 10, f"policy {policy}")

    async def say(self, line):
        self.ends = await self.tab.evaluate("document.querySelectorAll('.turn-end').length")
        self.mark = await self.tab.evaluate("document.querySelector('#messages').textContent.length")
        await self.tab.type("#input", line)
        await self.tab.key("Enter", key_code=13)

    async def proposal(self):
        await self.tab.wait_for(f"document.querySelector('{OPEN_CARD} .proposal-title')", 20, "a question's card")
        return await self.tab.evaluate(f"""(() => {{
            const card = document.querySelector('{OPEN_CARD}');
            return {{title: card.querySelector('.proposal-title').textContent,
                     notice: card.querySelector('.sandbox-notice')?.textContent ?? null,
                     diff: !!card.querySelector('.diff'),
                     always: [...card.querySelectorAll('button')].find(b => b.textContent === 'Always')?.title ?? null}};
        }})()""")

    async def answer(self, decision, feedback=None):
        if feedback:
            await self.tab.click_text(f"{OPEN_CARD} button", "Deny with feedback")
            await self.tab.type(f"{OPEN_CARD} .feedback", feedback)
            await self.tab.click_text(f"{OPEN_CARD} button", "Deny with feedback")
            return
        await self.tab.click_text(f"{OPEN_CARD} button", {"approve": "Approve", "reject": "Deny"}[decision])

    async def cancel(self):
        await self.tab.key("Escape", key_code=27)

    async def settled(self, turn, outcome):
        if turn:
            await self.tab.wait_for(f"document.querySelectorAll('.turn-end').length > {self.ends}", 30, "the turn to end")
            ended = await self.tab.evaluate("[...document.querySelectorAll('.turn-end')].pop().className")
            assert outcome in ended, (outcome, ended)

    async def shown(self):
        """What the page showed since the last line typed (notices stay a few seconds)."""
        return await self.tab.evaluate(f"document.querySelector('#messages').textContent.slice({self.mark}) + ' ' + document.querySelector('#notices').textContent")

    async def questions(self):
        return await self.tab.evaluate("document.querySelectorAll('.proposal:not(.diff-turn):not(.tool-servers)').length")

    async def disconnect_mid_approval(self, step, mock, project):
        """The page's socket goes away while a question waits (the tab navigates away); a new
        tab joins the conversation, sees the question and answers it; the turn goes on."""
        await self.set_policy(step["policy"])
        mock.enqueue(step["model"])
        await self.say(step["say"])
        first = await self.proposal()
        await self.tab.navigate("about:blank")
        await until(lambda: self._left(), 10, "the first tab's socket to close")
        await asyncio.sleep(1.0)
        assert not Path(project, step["marker"]).exists(), "ran without an answer"
        base = self.url.split("?", 1)[0]
        tab = await self.browser.new_tab(base)
        self.tabs.append(tab)
        self.tab = tab
        await self.connected(tab)
        second = await self.proposal()
        assert second == first, (first, second)
        self.ends = await tab.evaluate("document.querySelectorAll('.turn-end').length")
        await self.answer("approve")
        await self.settled(True, "completed")
        await until(lambda: _exists(Path(project, step["marker"])), 10, "the answered command to run")
        await mock.all_taken()
        return {"first": first, "answered_by": "a second tab"}

    async def _left(self):
        return await self.browser.evaluate("location.href") == "about:blank"

    async def frames(self):
        """Every frame the page's tabs received (and sent), checked against the published schema;
        returns the kinds received (`event:<type>`, `reply:<ok type>|error`, `request:…`, `protocol`)."""
        import jsonschema  # noqa: PLC0415 (only this check needs it)
        schema = json.loads(await self.tab.evaluate("fetch('/api/agent/schema').then(r => r.text())"))
        schema.pop("anyOf", None)
        received = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/ServerFrame"})
        # And what the page sent is a frame the server takes.
        sent = jsonschema.Draft202012Validator({**schema, "$ref": "#/$defs/ClientFrame"})
        kinds = set()
        for tab in self.tabs:
            for text in tab.frames_received():
                frame = json.loads(text)
                errors = [error.message for error in received.iter_errors(frame)]
                assert not errors, (frame, errors)
                kinds.add(_kind(frame))
            for text in tab.frames_sent():
                frame = json.loads(text)
                errors = [error.message for error in sent.iter_errors(frame)]
                assert not errors, (frame, errors)
        return kinds

    async def close(self):
        try:
            for tab in self.tabs[1:]:
                await tab.close_tab()
            await self.browser.close()
        finally:
            self.corvid.terminate()
            try:
                self.corvid.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.corvid.kill()
            self.log.close()


def _kind(frame):
    kind = frame.get("type")
    inner = frame.get("msg") or frame.get("ok") or {}
    if "error" in frame:
        return f"{kind}:error"
    return f"{kind}:{inner['type']}" if isinstance(inner, dict) and "type" in inner else kind


async def _exists(path):
    return path.exists()

