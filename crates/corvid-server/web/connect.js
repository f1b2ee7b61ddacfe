// The first run: while no provider can answer, the chat opens on the three ways to connect
// one — paste a key, sign in (SuperGrok, Zed), or point at a local OpenAI-compatible server —
// the same three the terminal prints. Each leads to the Settings or Status tab; back on the
// chat the view looks again, and once something is connected the page reloads onto it.

import { el } from "/assets/markdown.js";

const $ = (selector) => document.querySelector(selector);

// Connected: a provider that is on and ready with its key (or needing none), or a sign-in.
function connected(status) {
  const ready = status.providers.some((provider) => provider.enabled && provider.available
    && (provider.key === "present" || provider.key === "not_needed"));
  const xai = status.sign_ins.xai;
  return ready || (xai.mode === "oauth" && xai.signed_in) || status.sign_ins.zed.signed_in;
}

function tab(name) {
  $(`#tabs button[data-tab="${name}"]`)?.click();
}

function view() {
  const choice = (id, title, text, action) => {
    const button = el("button", [title], { class: "primary", id });
    button.addEventListener("click", action);
    return el("li", [button, el("p", [text], { class: "muted" })]);
  };
  return el("section", [
    el("h2", ["Connect a provider"]),
    el("p", ["corvid has no provider to answer with yet. Pick one way:"]),
    el("ol", [
      choice("connect-key", "Paste an API key",
        "An xAI key (XAI_API_KEY), or OpenAI's, Anthropic's, Gemini's: Settings → Keys. It is kept in corvid's env file and never shown again.",
        () => { tab("settings"); }),
      choice("connect-sign-in", "Sign in to SuperGrok or Zed",
        "Your SuperGrok subscription (xAI) or a Zed account's hosted models: the Status tab's Sign-ins (or `corvid login xai`, `corvid login zed`).",
        () => { tab("status"); }),
      choice("connect-local", "Use a local server",
        "Ollama, llama.cpp, vLLM or any OpenAI-compatible server: Settings → Providers (switch ollama on, or set its base URL), then make it the default with default_provider in config.toml.",
        () => { tab("settings"); }),
    ]),
    el("p", ["`corvid doctor` checks the result from a terminal."], { class: "muted" }),
  ], { id: "connect" });
}

async function look() {
  let status;
  try {
    const response = await fetch("/api/status");
    if (!response.ok) return;
    status = await response.json();
  } catch {
    return;
  }
  const shown = $("#connect");
  if (connected(status)) {
    shown?.remove();
    // Connected after the view was shown: the app now serves with the new settings, and this
    // page's socket still talks to the session of the old ones; reloading reconnects it (the
    // page keeps its cookie).
    if (shown) location.reload();
  } else if (!shown) {
    $("#chat")?.prepend(view());
  }
}

// app.js lays the page out first (module scripts run in order). A link to a tab (the desktop
// app's "Settings…" opens `#settings`) shows that tab.
function follow() {
  const linked = location.hash.slice(1);
  if (["settings", "status", "usage"].includes(linked)) tab(linked);
}
follow();
window.addEventListener("hashchange", follow);
look();
document.addEventListener("click", (event) => {
  if (event.target.closest?.('#tabs button[data-tab="chat"]')) look();
});
// Settings saved elsewhere (a key, a sign-in) take effect without a reload of this page.
setInterval(() => { if (!$("#chat")?.hidden) look(); }, 3000);
