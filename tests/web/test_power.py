"""The page's power-user controls in a real headless chromium against `corvid serve` and a
scripted mock model: plan mode from the selector, the plan card edited and the edited plan
carried out; "Always, saved in the project" and "Always, saved for me" writing allow rules;
"Never, saved for me" writing a deny rule that refuses the next such command without a card;
`/permissions` listing them and `/permissions add` saving one; a message's "edit" (rewind) and
"fork" actions. Saves a screenshot of each step in $CORVID_SCREENSHOTS (default
target/web-screenshots).

Run: python tests/web/test_power.py (after `cargo build --bins`; needs chromium and the
`websockets` package)."""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cdp import Browser  # noqa: E402
from test_page import SHOTS, Mock, send, start_corvid, text_reply, tool_reply, turn_ends  # noqa: E402


def tool_results(request):
    """The tool results a chat request sent to the model, as text."""
    return [m.get("content", "") for m in request["body"]["messages"] if m.get("role") == "tool"]


async def set_policy(browser, policy):
    await browser.evaluate("(() => { const p = document.querySelector('#policy'); "
                           f"p.value = '{policy}'; p.dispatchEvent(new Event('change')); }})()")


async def open_card(browser, what):
    await browser.wait_for("document.querySelector('.proposal:not(.closed) .buttons')", 20, what)


async def run(browser, mock, url, home, project):
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = lambda name: browser.screenshot(str(SHOTS / f"power-{name}.png"))
    user_settings = Path(home, "settings.json")
    project_settings = Path(project, ".corvid", "settings.json")

    await browser.navigate(url)
    await browser.wait_for("document.body.classList.contains('connected')", 20, "the page to connect")

    # 1. Plan mode from the selector: the plan arrives as a card; "Edit plan…" opens it in a
    # text area, a second click approves the edited text, which the same turn carries out
    # under the policy from before plan mode (ask: the write asks, "Always, saved in the
    # project" saves an allow rule).
    await set_policy(browser, "plan")
    await browser.wait_for("document.querySelector('#policy').value === 'plan'", 10, "plan mode")
    mock.enqueue(tool_reply("call_plan", "present_plan", {"plan": "# Make x\n\n1. Write `x`."}))
    mock.enqueue(tool_reply("call_write", "write", {"path": "y.txt", "content": "made\n"}))
    mock.enqueue(tool_reply("call_write2", "write", {"path": "z.txt", "content": "also\n"}))
    mock.enqueue(text_reply(["Carried out your plan."]))
    await send(browser, "Plan the files")
    await browser.wait_for("document.querySelector('.plan-proposal:not(.closed) pre.plan')", 20, "the plan card")
    assert "Make x" in await browser.evaluate("document.querySelector('.plan-proposal pre.plan').textContent")
    await shot("01-plan-card")
    await browser.click_text(".plan-proposal:not(.closed) button", "Edit plan")
    await browser.wait_for("!document.querySelector('.plan-proposal:not(.closed) .plan-edit').hidden", 10, "the plan editor")
    await browser.evaluate("document.querySelector('.plan-proposal:not(.closed) .plan-edit').value = "
                           "'# Make y and z\\n\\n1. Write `y.txt`.\\n2. Write `z.txt`.'")
    await shot("02-plan-edited")
    await browser.click_text(".plan-proposal:not(.closed) button", "Edit plan")
    # Back to ask: the first write asks; saved for the project, the second runs unasked.
    await browser.wait_for("[...document.querySelectorAll('.proposal:not(.closed) .proposal-title')]"
                           ".some(t => t.textContent === 'Write y.txt')", 20, "the write card")
    assert await browser.evaluate("document.querySelector('#policy').value") == "ask"
    await shot("03-save-project")
    await browser.click_text(".proposal:not(.closed) button", "Always, saved in the project")
    await turn_ends(browser, 1)
    assert Path(project, "y.txt").read_text() == "made\n"
    assert Path(project, "z.txt").read_text() == "also\n"
    assert json.loads(project_settings.read_text())["permissions"]["allow"] == ["Write"]
    results = [text for request in mock.chat_requests() for text in tool_results(request)]
    assert any("Make y and z" in text for text in results), results
    assert not Path(project, "x").exists()

    # 2. "Always, saved for me": the rule goes to the user's settings.json.
    mock.enqueue(tool_reply("call_ls", "bash", {"command": "ls -a"}))
    mock.enqueue(text_reply(["Listed."]))
    await send(browser, "List the files")
    await open_card(browser, "the ls card")
    await browser.click_text(".proposal:not(.closed) button", "Always, saved for me")
    await turn_ends(browser, 2)
    assert json.loads(user_settings.read_text())["permissions"]["allow"] == ["Bash(ls:*)"]

    # 3. "Never, saved for me": rejected, a deny rule saved; the next such command is refused
    # by the rule, without a card.
    mock.enqueue(tool_reply("call_touch", "bash", {"command": "touch a.txt"}))
    mock.enqueue(tool_reply("call_touch2", "bash", {"command": "touch b.txt"}))
    mock.enqueue(text_reply(["I will not touch files."]))
    await send(browser, "Touch two files")
    await open_card(browser, "the touch card")
    await shot("04-never")
    cards = await browser.evaluate("document.querySelectorAll('.proposal').length")
    await browser.click_text(".proposal:not(.closed) button", "Never, saved for me")
    await turn_ends(browser, 3)
    assert await browser.evaluate("document.querySelectorAll('.proposal').length") == cards, "the second touch asked"
    assert not Path(project, "a.txt").exists() and not Path(project, "b.txt").exists()
    saved = json.loads(user_settings.read_text())["permissions"]
    assert saved == {"allow": ["Bash(ls:*)"], "deny": ["Bash(touch:*)"]}, saved
    last = tool_results(mock.chat_requests()[-1])
    assert any("Bash(touch:*)" in text for text in last), last

    # 4. `/permissions` lists the rules with their files; `/permissions add` saves one.
    asked = len(mock.chat_requests())
    await send(browser, "/permissions add deny Bash(cat:*)")
    await browser.wait_for("[...document.querySelectorAll('.permissions')].some(p => p.textContent.includes('saved `Bash(cat:*)`'))",
                           10, "the added rule")
    listed = await browser.evaluate("[...document.querySelectorAll('.permissions')].pop().textContent")
    for line in ["allow Write — .corvid/settings.json", "deny Bash(cat:*) — .corvid/settings.json",
                 "allow Bash(ls:*) — ", "deny Bash(touch:*) — "]:
        assert line in listed, (line, listed)
    assert json.loads(project_settings.read_text())["permissions"]["deny"] == ["Bash(cat:*)"]
    assert len(mock.chat_requests()) == asked, "/permissions called the model"
    await shot("05-permissions")

    # 5. A message's actions: "edit" rewinds to before it (the message back in the input, the
    # tail gone); "fork" copies the conversation up to it into a new one.
    action = ("[...document.querySelectorAll('#messages .user')].find(u => u.dataset.text === {text!r})"
              ".querySelector('[title^=\"{title}\"]').click()")
    conversations = await browser.evaluate("document.querySelectorAll('#conversations li').length")
    await browser.evaluate(action.format(text="Touch two files", title="go back to this message and edit"))
    await browser.wait_for("document.querySelector('#input').value === 'Touch two files'", 10, "the message back in the input")
    await browser.wait_for("!document.querySelector('#messages').textContent.includes('I will not touch files')", 10, "the tail to leave")
    assert "List the files" in await browser.evaluate("document.querySelector('#messages').textContent")
    await shot("06-rewound")
    await browser.evaluate("document.querySelector('#input').value = ''")
    await browser.evaluate(action.format(text="List the files", title="copy the conversation"))
    await browser.wait_for(f"document.querySelectorAll('#conversations li').length === {conversations + 1}", 10, "the fork in the list")
    await browser.wait_for("document.querySelector('#input').value === 'List the files'", 10, "the forked message in the input")
    await browser.wait_for("!document.querySelector('#messages').textContent.includes('Listed.')", 10, "the fork shown")
    assert "Plan the files" in await browser.evaluate("document.querySelector('#messages').textContent")
    assert len(mock.chat_requests()) == asked, "rewind and fork called the model"
    await shot("07-forked")


async def main():
    mock = Mock()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as project:
        subprocess.run(["git", "init", "-q", project], check=True)
        corvid, url = start_corvid(home, project, mock)
        browser = Browser(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
        try:
            await browser.attach()
            await run(browser, mock, url, home, project)
            print(f"power-user page test passed; screenshots in {SHOTS}")
        except BaseException:
            print(Path(home, "corvid.log").read_text()[-4000:], file=sys.stderr)
            try:
                await browser.screenshot(str(SHOTS / "power-failure.png"))
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
