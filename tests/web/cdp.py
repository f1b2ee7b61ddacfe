"""A small Chrome DevTools Protocol driver: start Debian's chromium headless, attach to its page
(and open more tabs), evaluate JavaScript, type real keys, click, and take screenshots."""

import asyncio
import base64
import itertools
import json
import os
import re
import subprocess
import tempfile
import urllib.request

import websockets

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class Tab:
    """One page target: its own DevTools socket and the events it reported (Page, Runtime and
    Network, so the page's own WebSocket frames are seen too)."""

    def __init__(self):
        self.ids = itertools.count(1)
        self.pending = {}
        self.events = []

    async def connect(self, debugger_url):
        self.socket = await websockets.connect(debugger_url, max_size=64 * 1024 * 1024)
        self.reader = asyncio.create_task(self._read())
        await self.call("Page.enable")
        await self.call("Runtime.enable")
        await self.call("Network.enable")

    def frames_sent(self):
        """The text of every WebSocket frame the page sent so far."""
        return [e["params"]["response"].get("payloadData", "") for e in self.events
                if e.get("method") == "Network.webSocketFrameSent"]

    def frames_received(self):
        """The text of every WebSocket frame the page received so far."""
        return [e["params"]["response"].get("payloadData", "") for e in self.events
                if e.get("method") == "Network.webSocketFrameReceived"]

    async def bring_to_front(self):
        await self.call("Page.bringToFront")

    async def _read(self):
        try:
            async for text in self.socket:
                message = json.loads(text)
                if "id" in message and message["id"] in self.pending:
                    self.pending.pop(message["id"]).set_result(message)
                else:
                    self.events.append(message)
        except websockets.ConnectionClosed:
            pass  # the tab was closed (or chromium stopped): nothing more will come

    async def call(self, method, **params):
        id_ = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[id_] = future
        await self.socket.send(json.dumps({"id": id_, "method": method, "params": params}))
        message = await asyncio.wait_for(future, 30)
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return message["result"]

    async def evaluate(self, expression):
        result = await self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression, timeout=20, what=None):
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                value = await self.evaluate(f"!!({expression})")
            except RuntimeError:
                value = False  # the page is still loading (no body yet)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out waiting for {what or expression}")
            await asyncio.sleep(0.1)

    async def navigate(self, url):
        await self.call("Page.navigate", url=url)

    async def click(self, selector):
        found = await self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false; e.scrollIntoView(); e.click(); return true; }})()")
        assert found, f"no element {selector}"

    async def click_text(self, selector, text):
        found = await self.evaluate(
            f"(() => {{ const e = [...document.querySelectorAll({json.dumps(selector)})].find(e => e.textContent.includes({json.dumps(text)})); if (!e) return false; e.click(); return true; }})()")
        assert found, f"no {selector} with {text!r}"

    async def type(self, selector, text):
        await self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        await self.call("Input.insertText", text=text)

    async def key(self, key, code=None, key_code=0):
        for kind in ("keyDown", "keyUp"):
            await self.call("Input.dispatchKeyEvent", type=kind, key=key, code=code or key,
                            windowsVirtualKeyCode=key_code, nativeVirtualKeyCode=key_code)

    async def size(self, width, height, mobile=False):
        await self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                        deviceScaleFactor=1, mobile=mobile)

    async def screenshot(self, path):
        result = await self.call("Page.captureScreenshot", format="png")
        with open(path, "wb") as file:
            file.write(base64.b64decode(result["data"]))

    async def close_tab(self):
        try:
            await self.call("Page.close")
        except Exception:
            pass
        try:
            await self.socket.close()
        except Exception:
            pass


class Browser(Tab):
    def __init__(self, executable="/usr/bin/chromium"):
        super().__init__()
        self.profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile.name}", "--remote-debugging-port=0",
             "--window-size=1200,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in self.process.stderr:
            found = re.search(r"DevTools listening on ws://([\d.]+:\d+)/", line)
            if found:
                self.debug = found.group(1)
                break
        else:
            raise RuntimeError("chromium did not start its DevTools endpoint")

    async def attach(self):
        with urllib.request.urlopen(f"http://{self.debug}/json/list", timeout=10) as response:
            targets = json.loads(response.read())
        page = next(target for target in targets if target["type"] == "page")
        await self.connect(page["webSocketDebuggerUrl"])

    async def new_tab(self, url):
        """Another tab of the same browser (the same profile, so the same cookies) at `url`."""
        request = urllib.request.Request(f"http://{self.debug}/json/new?{url}", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:
            target = json.loads(response.read())
        tab = Tab()
        await tab.connect(target["webSocketDebuggerUrl"])
        return tab

    async def close(self):
        try:
            await self.socket.close()
        except Exception:
            pass
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.profile.cleanup()
