"""The terminal UI's driver: `corvid chat` in a real pseudo-terminal (tmux on a private socket),
the user's lines typed as keys, the screen and scrollback read back. Wide, so no line wraps."""

import asyncio
import itertools
import json
import os
import re
import subprocess
from pathlib import Path

from common import CORVID, until

WIDTH, HEIGHT = 220, 50
_NEXT = itertools.count()
TURN_END = re.compile(r"^─ (done|interrupted|failed|stopped)", re.MULTILINE)


class TerminalFace:
    name = "terminal"

    async def start(self, mock, home, project):
        self.socket = f"corvid-faces-{os.getpid()}-{next(_NEXT)}"
        script = (f"env -i PATH=/usr/bin:/bin TERM=xterm-256color CORVID_HOME='{home}' "
                  f"CORVID_UPSTREAM='{mock.base_url}' XAI_API_KEY=upstream-key '{CORVID}' chat --model grok "
                  f"--project '{project}' 2>'{home}/chat.log'; sleep 30")
        subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-x", str(WIDTH),
                        "-y", str(HEIGHT), script], check=True)
        await self.wait_shown("corvid chat ·")
        self.home = home

    def log_text(self):
        return "\n".join(line for line in self.history().splitlines() if line.strip())[-4000:]

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True).stdout

    def history(self):
        return self.tmux("capture-pane", "-p", "-t", "0", "-S", "-", "-E", "-")

    async def type_line(self, text):
        self.tmux("send-keys", "-t", "0", "-l", text)
        await asyncio.sleep(0.1)
        self.tmux("send-keys", "-t", "0", "Enter")

    async def wait_shown(self, needle, timeout=20):
        async def seen():
            return needle in self.history()
        await until(seen, timeout, repr(needle))

    async def set_policy(self, policy):
        before = self.history().count(f"approvals {policy}")
        await self.type_line(f"/approval {policy}")

        async def changed():
            return self.history().count(f"approvals {policy}") > before
        await until(changed, 10, f"policy {policy}")

    async def say(self, line):
        self.ends = len(TURN_END.findall(self.history()))
        self.asked = self.history().count("? allow: ")
        self.line = line
        await self.type_line(line)

    async def proposal(self):
        async def asked():
            return self.history().count("? allow: ") > self.asked
        await until(asked, 20, "a question")
        await self.wait_shown("1 yes · ", 5)
        lines = self.history().splitlines()
        start = max(i for i, line in enumerate(lines) if line.startswith("? allow: "))
        after = [line.rstrip() for line in lines[start + 1:]]
        notices = [line[4:] for line in after if line.startswith("  ! ")]
        always = [line[len("  2 always: "):] for line in after if line.startswith("  2 always: ")]
        hint = next(line for line in after if line.startswith("1 yes · "))
        # The answers offered are the ones the proposal allows.
        assert ("2 always" in hint) == bool(always), (hint, always)
        return {"title": lines[start][len("? allow: "):].rstrip(), "notice": notices[0] if notices else None,
                "always": always[0] if always else None}

    async def answer(self, decision, feedback=None):
        # Any other text rejects, with it as the feedback.
        await self.type_line(feedback or {"approve": "y", "reject": "n"}[decision])

    async def cancel(self):
        self.tmux("send-keys", "-t", "0", "Escape")

    async def settled(self, turn, outcome):
        if turn:
            async def ended():
                return len(TURN_END.findall(self.history())) > self.ends
            await until(ended, 30, "the turn to end")
            last = TURN_END.findall(self.history())[-1]
            assert last == {"completed": "done", "cancelled": "interrupted"}[outcome], (outcome, last)

    async def shown(self):
        """What the terminal showed since the last line typed (from its echo on)."""
        lines = self.history().splitlines()
        echoed = [i for i, shown in enumerate(lines) if shown.rstrip() == f"› {self.line}"]
        return "\n".join(lines[echoed[-1]:]) if echoed else ""

    async def questions(self):
        return self.history().count("? allow: ")

    def corvid_pid(self):
        """The pid of `corvid chat` (the pane's shell's child)."""
        shell = self.tmux("display-message", "-p", "-t", "0", "#{pane_pid}").strip()
        children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        assert children, "corvid chat is not running"
        return int(children[0])

    async def disconnect_mid_approval(self, step, mock, project):
        """The terminal goes away (its tmux server killed: a hang-up) while a question waits:
        `corvid chat` ends promptly and runs nothing; a new `corvid chat` on the same project
        answers the next message."""
        await self.set_policy(step["policy"])
        sent_before = len(mock.chat_requests())
        mock.enqueue(step["model"][:1])
        await self.say(step["say"])
        first = await self.proposal()
        pid = self.corvid_pid()
        self.tmux("kill-server")

        async def gone():
            return not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
        await until(gone, 5, "corvid chat to end after its terminal went away")
        assert not Path(project, step["marker"]).exists(), "ran without an answer"
        await self.start(mock, self.home, project)
        mock.enqueue([{"text": "still here"}])
        await self.say("are you there?")
        await self.settled(True, "completed")
        await self.wait_shown("still here", 10)
        told = json.dumps([r.get("body") for r in (await mock.all_taken())[sent_before:]])
        assert "user rejected" not in told, "a vanished terminal's question became a rejection"
        assert not Path(project, step["marker"]).exists(), "ran without an answer"
        return {"first": first, "answered_by": "nobody (the process ended); a new corvid chat went on"}

    async def close(self):
        self.tmux("kill-server")
