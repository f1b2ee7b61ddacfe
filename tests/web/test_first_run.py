"""A first run in a real headless chromium, against the desktop app (`corvid-desktop`, which
follows its settings live) with no credential and a mock provider: the chat opens on the
"connect a provider" view with its three choices; pasting a key on the Settings tab connects
it (no restart, the same page link); the view goes away and a message gets its answer.

Run: python tests/web/test_first_run.py (after `cargo build --bins`; needs /usr/bin/chromium and
the `websockets` package)."""

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cdp import Browser  # noqa: E402
from test_page import SHOTS, TARGET, Mock, clean_env, free_port, text_reply, turn_ends, send  # noqa: E402

KEY = "xai-first-run-key-5521"


def start_desktop(home, project, mock):
    port = free_port()
    log = open(Path(home, "desktop.log"), "w")
    env = clean_env(CORVID_HOME=home, CORVID_UPSTREAM=mock.base_url, NO_COLOR="1")
    # No session bus: no tray, the app keeps serving (and says so in its log).
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    process = subprocess.Popen(
        [str(TARGET / "corvid-desktop"), "--port", str(port), "--project", str(project)],
        env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    deadline = time.monotonic() + 30
    for line in process.stdout:
        if "web page is at" in line:
            return process, line.split(" at ", 1)[1].strip()
        if time.monotonic() > deadline:
            break
    raise AssertionError("corvid-desktop printed no page URL:\n" + Path(home, "desktop.log").read_text())


async def run(browser, mock, url, home):
    SHOTS.mkdir(parents=True, exist_ok=True)
    await browser.navigate(url)
    await browser.wait_for("document.body.classList.contains('connected')", 20, "the page to connect")
    await browser.wait_for("document.querySelector('#connect')", 10, "the connect view")
    text = await browser.evaluate("document.querySelector('#connect').textContent")
    for choice in ("Paste an API key", "Sign in to SuperGrok or Zed", "Use a local server"):
        assert choice in text, text
    await browser.screenshot(str(SHOTS / "first-run-01-connect.png"))

    # Choice 1: the key, pasted on the Settings tab.
    await browser.click("#connect-key")
    await browser.wait_for("!document.querySelector('#settings').hidden", 10, "the settings tab")
    await browser.wait_for("document.querySelector('[data-key=\"XAI_API_KEY\"]')", 10, "the key field")
    await browser.type("[data-key=\"XAI_API_KEY\"]", KEY)
    await browser.evaluate(
        "document.querySelector('[data-key=\"XAI_API_KEY\"]').parentElement.querySelector('button').click()")
    env_file = Path(home, "env")
    deadline = time.monotonic() + 10
    while KEY not in (env_file.read_text() if env_file.exists() else ""):
        assert time.monotonic() < deadline, "the key never reached the env file"
        await asyncio.sleep(0.1)

    # Back on the chat: once the app serves with the key, the view goes away (the page reloads
    # onto the new settings, with the same link).
    await browser.evaluate("window.beforeKey = true")
    await browser.click("#tabs button[data-tab=\"chat\"]")
    await browser.wait_for("window.beforeKey === undefined && document.body.classList.contains('connected')",
                           20, "the page to reload and connect")
    await browser.wait_for("document.querySelector('#chat') && !document.querySelector('#connect')", 10,
                           "the connect view to stay away")
    await asyncio.sleep(0.5)
    assert not await browser.evaluate("!!document.querySelector('#connect')")
    mock.enqueue(text_reply(["Connected ", "and answering."]))
    await send(browser, "Hello")
    await turn_ends(browser, 1)
    answer = await browser.evaluate("[...document.querySelectorAll('.assistant')].pop().textContent")
    assert "answering" in answer, answer
    sent = mock.chat_requests()[-1]
    assert sent["headers"].get("authorization") == f"Bearer {KEY}", sent["headers"]
    await browser.screenshot(str(SHOTS / "first-run-02-answered.png"))

    # The desktop app's "Settings…" opens the page on its Settings tab.
    await browser.navigate(url.split("?", 1)[0] + "#settings")
    await browser.wait_for("document.querySelector('#settings') && !document.querySelector('#settings').hidden",
                           10, "the settings tab from the link")


async def main():
    mock = Mock()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as project:
        desktop, url = start_desktop(home, project, mock)
        browser = Browser(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
        try:
            await browser.attach()
            await run(browser, mock, url, home)
            print(f"first-run page test passed; screenshots in {SHOTS}")
        except BaseException:
            print(Path(home, "desktop.log").read_text()[-4000:], file=sys.stderr)
            try:
                await browser.screenshot(str(SHOTS / "first-run-failure.png"))
            except Exception:
                pass
            raise
        finally:
            try:
                await browser.close()
            finally:
                desktop.terminate()
                try:
                    desktop.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    desktop.kill()
                mock.process.kill()


if __name__ == "__main__":
    asyncio.run(main())
