"""Real clients — Claude Code (`claude -p`) and Codex CLI (`codex exec`) — against a real
`corvid serve` in front of the mock model provider (mock_model.py), set up with exactly what
`corvid setup claude-code` / `corvid setup codex` print.

scripts/test installs both clients (pinned in tests/clients/package-lock.json) into
.cache/clients and points CORVID_CLIENTS_BIN at their `node_modules/.bin`; without it the
tests are skipped (a plain `pytest` run on a machine without the clients).

Neither client may reach the internet: each gets a throwaway HOME/config folder, its
non-essential traffic (telemetry, updates, error reports) off, and every proxy variable pointed
at a closed loopback port, with only 127.0.0.1 exempt — so anything that is not corvid fails
instead of leaving the machine.
"""

import contextlib
import json
import os
import sqlite3
import re
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import TARGET, _clean_env, _free_port, _wait_healthy
from mock_model import ANTHROPIC_SIGNATURE, GEMINI_SIGNATURE, MOCK_REPLY, REFUSAL, MockModel

CLIENTS_BIN = os.environ.get("CORVID_CLIENTS_BIN")
pytestmark = pytest.mark.skipif(not CLIENTS_BIN, reason="CORVID_CLIENTS_BIN not set (scripts/test sets it)")

# A closed port: a client that ignores NO_PROXY's loopback exemption gets a refused connection.
DEAD_PROXY = "http://127.0.0.1:9"
CLIENT_TIMEOUT = 120


def _offline_env(home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.upper().endswith("_PROXY") and not k.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_", "CORVID_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
               HTTP_PROXY=DEAD_PROXY, HTTPS_PROXY=DEAD_PROXY, ALL_PROXY=DEAD_PROXY,
               http_proxy=DEAD_PROXY, https_proxy=DEAD_PROXY, all_proxy=DEAD_PROXY,
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", NO_COLOR="1")
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def model():
    mock = MockModel(reasoning=True)
    yield mock
    mock.close()
    # For debugging a client's traffic: every request the mock saw, as JSON.
    if os.environ.get("CORVID_MOCK_DUMP"):
        Path(os.environ["CORVID_MOCK_DUMP"]).write_text(json.dumps(mock.requests, indent=1))


@contextlib.contextmanager
def serve(model, extra_config: str = "", extra_env: str = ""):
    """`corvid serve` with every provider kind on the mock model: xai (chat), anthropic, and a
    Responses provider `resp`; `extra_config` is appended to its config.toml, `extra_env` to its
    env file."""
    with tempfile.TemporaryDirectory() as home:
        port = _free_port()
        Path(home, "env").write_text("XAI_API_KEY='sk-upstream-test'\nANTHROPIC_API_KEY=ant-test\n"
                                     "OPENAI_API_KEY=oai-test\nGEMINI_API_KEY=gem-test\n" + extra_env)
        os.chmod(Path(home, "env"), 0o600)
        base = model.base_url
        Path(home, "config.toml").write_text(
            f"port = {port}\n"
            f'[providers.anthropic]\nbase_url = "{base}"\n'
            f'[providers.gemini]\nbase_url = "{base}"\n'
            f'[providers.resp]\nkind = "openai-responses"\nbase_url = "{base}"\napi_key_env = "OPENAI_API_KEY"\n'
            'models = ["resp-model"]\n'
            # An OpenAI-compatible chat server (Ollama, vLLM…): Codex's Responses are translated.
            f'[providers.local]\nkind = "openai-chat"\nbase_url = "{base}"\nmodels = ["qwen3-coder"]\n'
            # A Claude name Claude Code knows, served by Grok: the translated path without the
            # system turns Claude Code sends for names it does not know.
            '[aliases]\nclaude-opus-4-1 = "xai/grok-4.6"\nclaude-opus-4-0 = "gemini/gemini-2.5-pro"\n'
            + extra_config)
        env = _clean_env(CORVID_HOME=home, CORVID_UPSTREAM=base, CORVID_LOG_LEVEL="debug", NO_COLOR="1")
        log_path = Path(home, "corvid.log")
        with open(log_path, "w") as log:
            process = subprocess.Popen([str(TARGET / "corvid"), "serve"], env=env, stdout=log,
                                       stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, process, log_path)
            yield {"url": url, "env": env, "log": log_path, "home": home}
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if os.environ.get("CORVID_MOCK_DUMP"):
                Path(os.environ["CORVID_MOCK_DUMP"] + ".corvid.log").write_text(log_path.read_text())


@pytest.fixture(scope="module")
def gateway(model):
    with serve(model) as running:
        yield running


def corvid_setup(gateway, client: str, model_name: str) -> str:
    return subprocess.run([str(TARGET / "corvid"), "setup", client, "--model", model_name], env=gateway["env"],
                          check=True, capture_output=True, text=True).stdout


def run(command, env, cwd, gateway, check=True):
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
    if not check:
        return done
    if done.returncode != 0:
        log = Path(gateway["log"]).read_text()[-4000:]
        raise AssertionError(f"{command[0]} exited {done.returncode} after {time.monotonic() - started:.1f}s\n"
                             f"stdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}\ncorvid log tail:\n{log}")
    return done.stdout


def tool_result_reached(requests, word: str) -> bool:
    """Some request carried the tool's output `<word>-done` back to the model."""
    return any(f"{word}-done" in json.dumps(request["body"]) for request in requests)


def unsigned_thinking(requests) -> list:
    """Thinking blocks sent to Anthropic that Anthropic did not sign. Claude Code recovers from
    Anthropic's 400 by dropping its thinking blocks and retrying; corvid must not cost it that
    failed request (nor the reasoning it drops)."""
    return [block for request in requests for message in request["body"].get("messages", [])
            if isinstance(message["content"], list) for block in message["content"]
            if block.get("type") == "thinking" and not block.get("signature", "").startswith(ANTHROPIC_SIGNATURE)]


# ---------- Claude Code ----------

class Claude:
    """`claude -p` in a throwaway home and project, configured by `corvid setup claude-code`."""

    def __init__(self, gateway, model_name: str):
        self.gateway = gateway
        self.root = Path(tempfile.mkdtemp(prefix="corvid-claude-"))
        self.project = self.root / "project"
        self.project.mkdir()
        snippet = corvid_setup(gateway, "claude-code", model_name)
        exports = dict(re.findall(r"^export (\w+)=(.*)$", snippet, re.M))
        assert exports["ANTHROPIC_BASE_URL"] == gateway["url"], snippet
        self.env = _offline_env(self.root, **exports, CLAUDE_CONFIG_DIR=str(self.root / ".claude"),
                                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                                DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1", DISABLE_BUG_COMMAND="1",
                                CLAUDE_CODE_DISABLE_TERMINAL_TITLE="1")

    def ask(self, prompt: str, *extra: str) -> dict:
        out = run([str(Path(CLIENTS_BIN) / "claude"), "-p", prompt, "--output-format", "json",
                   "--allowedTools", "Bash", *extra], self.env, self.project, self.gateway)
        result = json.loads(out)
        assert not result.get("is_error"), result
        return result


@pytest.mark.parametrize("model_name,path", [
    pytest.param("claude-sonnet-4-5", "/messages", id="pass-through"),
    pytest.param("grok-4.6", "/chat/completions", id="translated"),
    pytest.param("resp/resp-model", "/responses", id="translated-responses"),
])
def test_claude_code_plain_answer_and_tool_round_trip(gateway, model, model_name, path):
    claude = Claude(gateway, model_name)
    before = len(model.generations(path))
    assert claude.ask("Say hello.")["result"] == MOCK_REPLY
    result = claude.ask("RUN_TOOL ccword1 please.")
    requests = model.generations(path)[before:]
    assert tool_result_reached(requests, "ccword1"), "the Bash output never came back to the model"
    assert result["result"].startswith("Saw tool result: ccword1-done"), result
    if path == "/chat/completions":
        # Claude Code's billing line is for Anthropic only (item 4).
        leaked = [r for r in requests if "x-anthropic-billing-header" in json.dumps(r["body"])]
        assert not leaked, leaked[0]["body"]["messages"][0]


# A Claude name Claude Code knows (so it sends no system turns), served by Grok through the
# gateway's alias: the translated path as far as it goes without item 1.
GROK_UNDER_A_CLAUDE_NAME = "claude-opus-4-1"


def test_claude_code_on_grok_under_a_claude_name(gateway, model):
    claude = Claude(gateway, GROK_UNDER_A_CLAUDE_NAME)
    before = len(model.generations("/chat/completions"))
    assert claude.ask("Say hello.")["result"] == MOCK_REPLY
    result = claude.ask("RUN_TOOL ccalias please.")
    requests = model.generations("/chat/completions")[before:]
    assert requests and all(r["body"]["model"] == "grok-4.6" for r in requests)
    assert tool_result_reached(requests, "ccalias"), "the Bash output never came back to the model"
    assert result["result"].startswith("Saw tool result: ccalias-done"), result


def test_claude_code_on_gemini_under_a_claude_name(gateway, model):
    claude = Claude(gateway, "claude-opus-4-0")
    before = len(model.generations(":streamGenerateContent"))
    assert claude.ask("Say hello.")["result"] == MOCK_REPLY
    result = claude.ask("RUN_TOOL ccgem please.")
    requests = model.generations(":streamGenerateContent")[before:]
    assert tool_result_reached(requests, "ccgem"), "the Bash output never came back to the model"
    assert result["result"].startswith("Saw tool result:") and "ccgem-done" in result["result"], result


def replayed_gemini_signatures(requests) -> list:
    """The thoughtSignature on each functionCall part sent back to Gemini."""
    return [part.get("thoughtSignature") for request in requests for content in request["body"].get("contents", [])
            for part in content.get("parts", []) if "functionCall" in part]


@pytest.mark.parametrize("client", ["claude-code", "codex"])
def test_gemini_thought_signatures_come_back_intact(gateway, model, client):
    before = len(model.generations(":streamGenerateContent"))
    if client == "codex":
        Codex(gateway, "gemini-2.5-pro").exec("RUN_TOOL gsig please.")
    else:
        Claude(gateway, "claude-opus-4-0").ask("RUN_TOOL gsig please.")
    replayed = replayed_gemini_signatures(model.generations(":streamGenerateContent")[before:])
    assert replayed and all(signature == GEMINI_SIGNATURE for signature in replayed), replayed


def test_claude_code_billing_header_stays_with_anthropic(gateway, model):
    claude = Claude(gateway, GROK_UNDER_A_CLAUDE_NAME)
    before = len(model.generations("/chat/completions"))
    claude.ask("Say hello.")
    requests = model.generations("/chat/completions")[before:]
    assert requests
    leaked = [r for r in requests if "x-anthropic-billing-header" in json.dumps(r["body"])]
    assert not leaked, leaked[0]["body"]["messages"][0]["content"][:200]


def test_claude_code_session_moves_from_grok_under_a_claude_name_to_claude(gateway, model):
    claude = Claude(gateway, GROK_UNDER_A_CLAUDE_NAME)
    claude.ask("RUN_TOOL ccalmove please.")
    before = len(model.generations("/messages"))
    result = claude.ask("And now?", "--continue", "--model", "claude-sonnet-4-5")
    moved = model.generations("/messages")[before:]
    assert tool_result_reached(moved, "ccalmove"), "the Grok turn's history did not move with the session"
    assert result["result"] == MOCK_REPLY
    assert not unsigned_thinking(moved), unsigned_thinking(moved)


def test_claude_code_session_moves_from_grok_to_claude(gateway, model):
    claude = Claude(gateway, "grok-4.6")
    claude.ask("RUN_TOOL ccmove please.")
    before = len(model.generations("/messages"))
    result = claude.ask("And now?", "--continue", "--model", "claude-sonnet-4-5")
    moved = model.generations("/messages")[before:]
    assert tool_result_reached(moved, "ccmove"), "the Grok turn's history did not move with the session"
    assert result["result"] == MOCK_REPLY
    assert not unsigned_thinking(moved), unsigned_thinking(moved)



def ledger_rows(home: str) -> list:
    """`(model, provider, rule)` of every request in corvid's ledger."""
    with contextlib.closing(sqlite3.connect(Path(home, "corvid.db"))) as db:
        return db.execute("SELECT model, provider, rule FROM requests ORDER BY id").fetchall()


def test_claude_code_background_calls_take_the_background_rule(model):
    """Issue 22 item 4: with `[router] background`, Claude Code's small/fast-model calls (here a
    subagent it starts on `haiku`) go to the fast target, its main turns where asked."""
    with serve(model, '[router]\nbackground = "xai/grok-4.6"\n') as gateway:
        claude = Claude(gateway, "claude-sonnet-4-5")
        # Claude Code's own default small/fast model, as a user who set up the rule keeps it.
        for name in ("ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_SMALL_FAST_MODEL"):
            claude.env.pop(name, None)
        before = len(model.requests)
        result = claude.ask("RUN_AGENT ccbackground please.", "--allowedTools", "Agent")
        assert result["result"].startswith("Saw tool result:"), result
        sent = model.requests[before:]
        main = [r for r in sent if r["path"].endswith("/messages") and r["body"].get("model") == "claude-sonnet-4-5"]
        fast = [r for r in sent if r["path"].endswith("/chat/completions")]
        assert main, [(r["path"], r["body"].get("model")) for r in sent]
        assert fast, "no background call reached the fast target: " + repr([(r["path"], r["body"].get("model")) for r in sent])
        assert all(r["body"]["model"] == "grok-4.6" for r in fast)
        assert not [r for r in sent if "haiku" in str(r["body"].get("model", ""))], "a Haiku call reached Anthropic"
        # The ledger names the rule for each background call, none for the main turn.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            rows = ledger_rows(gateway["home"]) if Path(gateway["home"], "corvid.db").exists() else []
            if len(rows) >= len(main) + len(fast):
                break
            time.sleep(0.2)
        assert ("claude-sonnet-4-5", "anthropic", None) in rows, rows
        assert ("grok-4.6", "xai", "background") in rows, rows


# A route whose first target is down (nothing listens on its port): Claude Code and Codex are
# answered by the next target before any byte, and the ledger holds both attempts (issue 22).
FALLBACK_CONFIG = (
    '[providers.down]\nkind = "anthropic"\nbase_url = "http://127.0.0.1:9"\nmodels = ["claude-sonnet-4-5"]\n'
    '[routes.team-main]\ntargets = ["down/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"]\n'
)


def _providers_in_ledger(home: str, count: int) -> list:
    deadline = time.monotonic() + 10
    rows = []
    while time.monotonic() < deadline:
        rows = ledger_rows(home) if Path(home, "corvid.db").exists() else []
        if len(rows) >= count:
            break
        time.sleep(0.2)
    return [provider for _model, provider, _rule in rows]


def test_claude_code_and_codex_are_answered_through_a_fallback_when_the_first_target_is_down(model):
    with serve(model, FALLBACK_CONFIG) as gateway:
        before = len(model.generations("/messages"))
        claude = Claude(gateway, "team-main")
        assert claude.ask("Say hello.")["result"] == MOCK_REPLY
        codex = Codex(gateway, "team-main")
        assert MOCK_REPLY in codex.exec("Say hello.")
        served = model.generations("/messages")[before:]
        assert served and all(r["body"]["model"] == "claude-sonnet-4-5" for r in served)
        providers = _providers_in_ledger(gateway["home"], 2 * len(served))
        assert "down" in providers and "anthropic" in providers, providers


# A provider with a key pool whose first key is rate-limited: Claude Code and Codex are answered
# with the second key, and the first rests (issue 22 item 2).
POOL_CONFIG = (
    '[providers.pooled]\nkind = "anthropic"\nbase_url = "{base}"\n'
    'api_key_envs = ["POOL_KEY_1", "POOL_KEY_2"]\nmodels = ["claude-sonnet-4-5"]\n'
    '[routes.pooled-main]\ntargets = ["pooled/claude-sonnet-4-5"]\n'
)


def test_claude_code_and_codex_are_answered_by_the_next_key_of_a_pool_when_one_is_rate_limited(model):
    model.rate_limited_keys.add("pool-one")
    try:
        with serve(model, POOL_CONFIG.format(base=model.base_url),
                   "POOL_KEY_1=pool-one\nPOOL_KEY_2=pool-two\n") as gateway:
            before = len(model.generations("/messages"))
            assert Claude(gateway, "pooled-main").ask("Say hello.")["result"] == MOCK_REPLY
            assert MOCK_REPLY in Codex(gateway, "pooled-main").exec("Say hello.")
            keys = [r["headers"].get("x-api-key") or r["headers"].get("X-Api-Key")
                    for r in model.generations("/messages")[before:]]
            answered = [key for key in keys if key == "pool-two"]
            # Every request carried a key of the pool (never none), and the second answered.
            assert answered and set(keys) <= {"pool-one", "pool-two"}, keys
            # The first key rests after its 429: once tried, not asked again for every request.
            assert keys.count("pool-one") <= 1, keys
    finally:
        model.rate_limited_keys.discard("pool-one")


# ---------- Codex ----------

class Codex:
    """`codex exec` with a throwaway CODEX_HOME whose config.toml is `corvid setup codex`'s."""

    def __init__(self, gateway, model_name: str):
        self.gateway = gateway
        self.root = Path(tempfile.mkdtemp(prefix="corvid-codex-"))
        self.project = self.root / "project"
        self.project.mkdir()
        home = self.root / ".codex"
        home.mkdir()
        snippet = corvid_setup(gateway, "codex", model_name)
        (home / "config.toml").write_text(snippet)
        key = re.search(r"export (\w+)=(\S+)", snippet)
        assert key, snippet
        self.env = _offline_env(self.root, CODEX_HOME=str(home), **{key.group(1): key.group(2)})

    def exec(self, prompt: str, *config: str, resume: bool = False, model_name: str = None) -> str:
        command = [str(Path(CLIENTS_BIN) / "codex"), "exec"]
        if resume:
            command += ["resume", "--last"]
        command += ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        for setting in config:
            command += ["-c", setting]
        if model_name:
            command += ["-m", model_name]
        return run(command + [prompt], self.env, self.project, self.gateway)


@pytest.mark.parametrize("model_name,path", [
    pytest.param("resp/resp-model", "/responses", id="pass-through"),
    pytest.param("grok", "/responses", id="pass-through-xai"),
    pytest.param("claude-sonnet-4-5", "/messages", id="translated"),
    pytest.param("local/qwen3-coder", "/chat/completions", id="translated-chat"),
    pytest.param("gemini-2.5-pro", ":streamGenerateContent", id="translated-gemini"),
])
def test_codex_plain_answer_and_tool_round_trip(gateway, model, model_name, path):
    codex = Codex(gateway, model_name)
    before = len(model.generations(path))
    assert MOCK_REPLY in codex.exec("Say hello.")
    out = codex.exec("RUN_TOOL cxword1 please.")
    requests = model.generations(path)[before:]
    assert tool_result_reached(requests, "cxword1"), "the shell output never came back to the model"
    assert "Saw tool result:" in out and "cxword1-done" in out, out


def test_codex_session_moves_from_claude_to_responses(gateway, model):
    codex = Codex(gateway, "claude-sonnet-4-5")
    codex.exec("RUN_TOOL cxmove please.")
    before = len(model.generations("/responses"))
    out = codex.exec("And now?", resume=True, model_name="resp/resp-model")
    moved = model.generations("/responses")[before:]
    assert moved, "the resumed session never reached the Responses provider"
    assert tool_result_reached(moved, "cxmove"), "the Claude turn's history did not move with the session"
    assert MOCK_REPLY in out


def test_codex_session_with_reasoning_moves_from_claude_to_responses(gateway, model):
    """With reasoning on, the Claude turn has a signed thinking block; the Responses provider
    must not be handed it as `encrypted_content` (it can't decrypt it and refuses the turn)."""
    effort = 'model_reasoning_effort="high"'
    codex = Codex(gateway, "claude-sonnet-4-5")
    before = len(model.generations("/messages"))
    codex.exec("RUN_TOOL cxthink please.", effort)
    thinking = [r for r in model.generations("/messages")[before:] if r["body"].get("thinking")]
    assert thinking, "reasoning effort never reached Claude as thinking"
    out = codex.exec("And now?", effort, resume=True, model_name="resp/resp-model")
    assert MOCK_REPLY in out


def test_codex_session_with_reasoning_moves_from_responses_to_claude(gateway, model):
    """The other way: the Responses provider's `encrypted_content` must not reach Claude as a
    thinking signature (Claude would refuse it)."""
    effort = 'model_reasoning_effort="high"'
    codex = Codex(gateway, "resp/resp-model")
    codex.exec("RUN_TOOL cxback please.", effort)
    before = len(model.generations("/messages"))
    out = codex.exec("And now?", effort, resume=True, model_name="claude-sonnet-4-5")
    moved = model.generations("/messages")[before:]
    assert tool_result_reached(moved, "cxback"), "the Responses turn's history did not move with the session"
    assert "mock-responses-encrypted" not in json.dumps([r["body"] for r in moved])
    assert MOCK_REPLY in out


def test_codex_namespace_tools_reach_a_translated_model(gateway, model):
    codex = Codex(gateway, "claude-sonnet-4-5")
    before = len(model.generations("/messages"))
    codex.exec("Say hello.")
    names = [tool.get("name", "") for request in model.generations("/messages")[before:]
             for tool in request["body"].get("tools") or []]
    assert any("multi_agent_v1" in name for name in names), names


# ---------- Refusals ----------

@pytest.mark.parametrize("model_name", [
    pytest.param("resp/resp-model", id="pass-through"),
    pytest.param("claude-sonnet-4-5", id="translated"),
    pytest.param("local/qwen3-coder", id="translated-chat"),
])
def test_codex_shows_the_providers_refusal(gateway, model, model_name):
    codex = Codex(gateway, model_name)
    command = [str(Path(CLIENTS_BIN) / "codex"), "exec", "--skip-git-repo-check",
               "--dangerously-bypass-approvals-and-sandbox", "REFUSE_THIS please."]
    started = time.monotonic()
    done = run(command, codex.env, codex.project, gateway, check=False)
    assert done.returncode != 0
    assert REFUSAL in done.stdout + done.stderr, (done.stdout[-2000:], done.stderr[-2000:])
    assert time.monotonic() - started < 30, "a 400 is final: no retrying"


def test_claude_code_shows_the_providers_refusal(gateway, model):
    claude = Claude(gateway, "claude-sonnet-4-5")
    command = [str(Path(CLIENTS_BIN) / "claude"), "-p", "REFUSE_THIS please.", "--output-format", "json"]
    done = run(command, claude.env, claude.project, gateway, check=False)
    result = json.loads(done.stdout)
    assert result["is_error"] and REFUSAL in result["result"], result
