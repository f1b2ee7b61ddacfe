// corvid's page: one module, no framework. The socket carries corvid-protocol frames (see
// /api/agent/schema); the REST API carries settings, status and usage. Everything a model or
// a tool wrote is put in the page as text (markdown.js builds nodes, never HTML).

import { el, renderMarkdown } from "/assets/markdown.js";
import { messageActions, onUserMessages } from "/assets/rewind.js";
import { attachImages, hasImages, restoreImages, takeImages } from "/assets/attach.js";

const FOLD_LINES = 12;
// The conversation this tab shows, kept across reloads and reconnects (per tab: sessionStorage).
const SHOWN = "corvid-conversation";

const state = {
  socket: null,
  next: 0,
  running: false,
  sentImages: null, // {id, images}: the images of the send waiting for its reply
  model: "",
  policy: "ask",
  protocol: null, // the engine's protocol version and command table, from the `protocol` frame
  commands: [],
  conversationId: null,
  sandbox: null, // the agent's kernel sandbox, from `ready`
  conversations: [],
  scopes: new Map(), // "depth:parent" → {box, text, textNode, reasoning}
  calls: new Map(), // call_id → tool card
  proposals: new Map(), // request (proposal) id → approval card
  conversationTokens: { input: 0, output: 0 },
  models: { models: [], aliases: {}, default_model: "" },
};

const $ = (selector) => document.querySelector(selector);

function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  return fetch(path, options).then(async (response) => {
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data?.error?.message || `${response.status}`);
    return data;
  });
}

function sendFrame(frame) {
  if (state.socket?.readyState === WebSocket.OPEN) state.socket.send(JSON.stringify(frame));
  else notice("error", "not connected to corvid");
}

function submit(op) {
  const id = `w${++state.next}`;
  sendFrame({ type: "submission", id, op });
  return id;
}

// The answer to one of the agent's requests; replied under the request's id (an error when
// another face answered first).
function respond(id, decision) {
  sendFrame({ type: "response", id, decision });
}

// ---- layout -------------------------------------------------------------------------------

function layout() {
  const policy = el("select", [], { id: "policy", title: "approval policy" });
  for (const name of ["read-only", "plan", "ask", "auto-edit", "full-auto"]) policy.append(el("option", [name], { value: name }));
  policy.addEventListener("change", () => submit({ type: "set_approval_policy", policy: policy.value }));
  const model = el("select", [], { id: "model", title: "model" });
  model.addEventListener("change", () => submit({ type: "set_model", model: model.value }));
  const tabs = el("nav", [], { id: "tabs" });
  for (const [name, label] of [["chat", "Chat"], ["settings", "Settings"], ["status", "Status"], ["usage", "Usage"]]) {
    const button = el("button", [label], { "data-tab": name });
    button.addEventListener("click", () => show(name));
    tabs.append(button);
  }
  const menu = el("button", ["☰"], { id: "menu", title: "conversations" });
  menu.addEventListener("click", () => document.body.classList.toggle("sidebar-open"));
  const header = el("header", [menu, el("strong", ["corvid"]), tabs, el("span", [], { class: "grow" }), model, policy]);

  const newButton = el("button", ["+ New"], { id: "new-conversation" });
  newButton.addEventListener("click", () => submit({ type: "open_conversation" }));
  const sidebar = el("aside", [newButton, el("ul", [], { id: "conversations" })]);

  const input = el("textarea", [], { id: "input", rows: "3", placeholder: "Message the agent — Enter sends, Shift-Enter is a newline, Esc stops. /help lists the commands" });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  });
  const sendButton = el("button", ["Send"], { id: "send" });
  sendButton.addEventListener("click", send);
  const stop = el("button", ["Stop"], { id: "stop", class: "danger" });
  stop.addEventListener("click", () => submit({ type: "cancel" }));
  const chat = el("section", [
    el("div", [], { id: "todos" }),
    el("div", [], { id: "messages" }),
    el("div", [], { id: "turn-usage" }),
    el("div", [], { id: "attachments", hidden: "" }),
    el("div", [input, el("div", [sendButton, stop], { class: "buttons" })], { id: "composer" }),
  ], { id: "chat", class: "page" });
  const main = el("main", [
    chat,
    el("section", [], { id: "settings", class: "page" }),
    el("section", [], { id: "status", class: "page" }),
    el("section", [], { id: "usage", class: "page" }),
  ]);
  $("#app").replaceChildren(header, el("div", [sidebar, main], { id: "body" }), el("div", [], { id: "notices" }));
  attachImages(input, $("#attachments"), notice);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.running) submit({ type: "cancel" });
  });
  // Other tabs add and delete conversations: coming back to this one, list them again.
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden && state.socket?.readyState === WebSocket.OPEN) submit({ type: "list_conversations" });
  });
  show("chat");
}

function show(name) {
  for (const page of document.querySelectorAll(".page")) page.hidden = page.id !== name;
  for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === name);
  if (name === "settings") loadSettings();
  if (name === "status") loadStatus();
  if (name === "usage") loadUsage();
}

// A notice in the corner. Information fades after a few seconds; an error or a warning stays
// until it is dismissed (it may be what the user needs to act on), the last few at most.
const KEPT_NOTICES = 4;
function notice(kind, text) {
  const item = el("div", [text], { class: `notice ${kind}`, role: kind === "info" ? "status" : "alert" });
  $("#notices").append(item);
  if (kind === "info") {
    setTimeout(() => item.remove(), 6000);
    return;
  }
  const dismiss = el("button", ["×"], { class: "dismiss", title: "Dismiss", "aria-label": "Dismiss" });
  dismiss.addEventListener("click", () => item.remove());
  item.append(dismiss);
  const kept = [...$("#notices").querySelectorAll(".notice:not(.info)")];
  kept.slice(0, Math.max(0, kept.length - KEPT_NOTICES)).forEach((old) => old.remove());
}

// A tool call the model is still writing (a whole file can take minutes on a local model):
// which tool and how much has arrived, in one line that the call itself replaces.
function showPreparing(scope, msg) {
  if (!state.preparing || !state.preparing.isConnected) {
    state.preparing = el("div", [], { class: "preparing muted" });
    scope.box.append(state.preparing);
  }
  state.preparing.textContent = `writing ${msg.tool} call, ${size(msg.bytes)}…`;
}

function clearPreparing() {
  state.preparing?.remove();
  state.preparing = null;
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? "byte" : "bytes"}`;
  if (bytes < 1048576) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1048576).toFixed(1)} MB`;
}

function setRunning(running) {
  state.running = running;
  document.body.classList.toggle("running", running);
}

// A line is a message, or a command of the protocol's one table (the server parses it with
// the same parser as every face, skills and custom commands included); /help is the page's own.
async function send() {
  const input = $("#input");
  const text = input.value.trim();
  if (!text && !hasImages()) return;
  input.value = "";
  askToNotify();
  if (text === "/help") {
    // The list as it is now: a command or skill written since the tab opened is in it.
    try {
      state.commands = (await api("GET", "/api/agent/commands")).commands;
    } catch (error) {
      // The list the socket's hello gave stays.
    }
    const lines = state.commands.map((c) => `/${c.name}${c.argument ? " " + c.argument : ""} — ${c.description}`);
    $("#messages").append(el("pre", [["/help — this list", ...lines].join("\n")], { class: "help" }));
    scrollDown();
    return;
  }
  if (text.startsWith("/")) {
    let answer;
    try {
      answer = await api("POST", "/api/agent/command", { line: text });
    } catch (error) {
      notice("error", String(error.message || error));
      return;
    }
    if (answer.op) {
      if (answer.op.type === "send") userMessage(text);
      submit(answer.op);
      return;
    }
  }
  // Pasted or dropped images go with the message (the agent refuses them, in words, for a
  // model without image input).
  const images = takeImages($("#attachments"));
  const marks = images.map(() => "[image]").join(" ");
  userMessage(marks ? (text ? `${text}\n${marks}` : marks) : text);
  const id = submit(images.length ? { type: "send", text, images } : { type: "send", text });
  if (images.length) state.sentImages = { id, images };
}

// ---- the conversation ---------------------------------------------------------------------

function userMessage(text) {
  const node = el("div", [text], { class: "user" });
  // Shown with an `[image]` mark per image (as the agent's history has it); found for rewind by
  // what was typed, as the agent lists it.
  messageActions(node, text.replace(/\n?\[image\]( \[image\])*$/, ""), submit);
  $("#messages").append(node);
  scrollDown();
}

function scrollDown() {
  const messages = $("#messages");
  messages.scrollTop = messages.scrollHeight;
}

function resetConversation() {
  $("#messages").replaceChildren();
  $("#todos").replaceChildren();
  $("#turn-usage").textContent = "";
  state.scopes.clear();
  state.calls.clear();
  state.proposals.clear();
  state.conversationTokens = { input: 0, output: 0 };
}

// Where an event's output goes: the main thread, or the box of the subagent that emitted it.
function scopeFor(event) {
  const key = `${event.depth}:${event.parent_call_id || ""}`;
  let scope = state.scopes.get(key);
  if (!scope) {
    const parent = event.depth > 0 && state.calls.get(event.parent_call_id);
    const box = parent ? parent.querySelector(".subagent") : $("#messages");
    scope = { box, text: "", node: null, reasoning: null };
    state.scopes.set(key, scope);
  }
  return scope;
}

function appendText(scope, delta) {
  if (!scope.node) {
    scope.node = el("div", [], { class: "assistant markdown" });
    scope.text = "";
    scope.box.append(scope.node);
  }
  scope.text += delta;
  scope.node.replaceChildren(renderMarkdown(scope.text));
}

function appendReasoning(scope, delta) {
  if (!scope.reasoning) {
    const body = el("div", [], { class: "reasoning-text" });
    scope.reasoning = el("details", [el("summary", ["Reasoning"]), body], { class: "reasoning" });
    scope.box.append(scope.reasoning);
  }
  scope.reasoning.querySelector(".reasoning-text").append(delta);
}

function endBlock(scope) {
  scope.node = null;
  scope.reasoning = null;
}

function folded(text, label) {
  const pre = el("pre", [text]);
  if (text.split("\n").length <= FOLD_LINES && text.length < 2000) return pre;
  return el("details", [el("summary", [`${label} (${text.split("\n").length} lines)`]), pre], { class: "fold" });
}

function toolCard(call, scope) {
  const card = el("div", [
    el("div", [el("span", [call.tool], { class: "tool-name" }), " ", call.summary], { class: "tool-head" }),
    folded(JSON.stringify(call.arguments, null, 2), "arguments"),
    el("div", [], { class: "subagent" }),
    el("div", [], { class: "tool-result" }),
  ], { class: "tool", "data-call": call.call_id });
  state.calls.set(call.call_id, card);
  scope.box.append(card);
}

function toolResult(result) {
  const card = state.calls.get(result.call_id);
  if (!card) return;
  card.classList.add(result.ok ? "ok" : "failed");
  const slot = card.querySelector(".tool-result");
  slot.replaceChildren(folded(result.output, result.ok ? "result" : "error"));
  if (result.truncation?.full_output_path) slot.append(el("div", [`full output: ${result.truncation.full_output_path}`], { class: "muted" }));
}

// The answer to /mcp: each MCP server, its state and its tools.
function toolServersView(servers) {
  const rows = servers.map((server) => {
    const prefix = `mcp__${server.name}__`;
    const tools = server.tools.map((tool) => (tool.startsWith(prefix) ? tool.slice(prefix.length) : tool));
    const lines = [
      el("div", [el("strong", [server.name]), " ", el("span", [server.description || server.state], { class: `server-state ${server.state}` })]),
      el("div", [`in ${server.configured_in} · ${server.transport}`], { class: "dim" }),
    ];
    if (tools.length) lines.push(el("div", [`tools: ${tools.join(", ")}`]));
    if (server.state === "untrusted") {
      const trust = el("button", ["Trust and start"], { class: "trust" });
      trust.addEventListener("click", () => {
        trust.disabled = true;
        submit({ type: "trust_tool_server", name: server.name });
      });
      lines.push(el("div", [trust]));
    }
    if (server.withheld?.length) lines.push(el("div", [`not offered (enabled_tools/disabled_tools): ${server.withheld.join(", ")}`], { class: "dim" }));
    return el("div", lines, { class: "tool-server" });
  });
  if (!servers.length) rows.push(el("div", ["No MCP servers in this session. `corvid mcp add NAME -- COMMAND…` adds one to the project's .corvid/mcp.json (--global: config.toml); a new tab starts it."]));
  return el("div", [el("div", ["MCP servers"], { class: "proposal-title" }), ...rows], { class: "proposal closed tool-servers" });
}

function diffView(diff) {
  const pre = el("pre", [], { class: "diff" });
  for (const line of diff.split("\n")) {
    const kind = line.startsWith("+++") || line.startsWith("---") ? "file" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
    pre.append(el("span", [line + "\n"], { class: kind }));
  }
  return pre;
}

// An approval is the agent's request for a decision: its title, its sandbox notice and the
// decisions it allows come from the agent, shown as they are; a click is the request's response.
function proposalCard(id, proposal, scope) {
  const kind = proposal.kind;
  const body = [el("div", [proposal.title], { class: "proposal-title" })];
  if (proposal.notice) body.push(el("div", [proposal.notice], { class: "sandbox-notice" }));
  if (kind.type === "edit" || kind.type === "write") body.push(diffView(kind.diff));
  else if (kind.type === "command") body.push(el("pre", [kind.command], { class: "command" }));
  else if (kind.type === "plan") body.push(el("pre", [kind.plan], { class: "plan" }));
  const answer = (decision) => respond(id, decision);
  if (kind.type === "plan") return planCard(id, proposal, scope, body, answer);
  const feedback = el("textarea", [], { rows: "2", placeholder: "What should the agent do instead?", class: "feedback", hidden: "" });
  const buttons = el("div", [], { class: "buttons" });
  const button = (label, action, cls = "") => {
    const b = el("button", [label], { class: cls });
    b.addEventListener("click", action);
    buttons.append(b);
  };
  const allows = (decision) => (proposal.decisions || []).includes(decision);
  button("Approve", () => answer({ type: "approve" }), "primary");
  if (allows("approve_always") && proposal.always_scope) {
    button("Always", () => answer({ type: "approve_always", scope: proposal.always_scope }));
    if (proposal.always_description) buttons.lastChild.title = proposal.always_description;
  }
  const saves = [["save_always_project", "project", "Always, saved in the project"], ["save_always_user", "user", "Always, saved for me"]];
  for (const [decision, file, label] of saves) {
    if (allows(decision) && proposal.always_scope) button(label, () => answer({ type: "save_always", scope: proposal.always_scope, file }));
  }
  button("Deny", () => answer({ type: "reject" }), "danger");
  button("Deny with feedback…", () => {
    if (feedback.hidden) {
      feedback.hidden = false;
      feedback.focus();
    } else answer({ type: "reject", feedback: feedback.value.trim() || undefined });
  });
  // "Never": deny, and save the rule as a `deny` rule (it wins over any allow).
  const nevers = [["save_never_project", "project", "Never, saved in the project"], ["save_never_user", "user", "Never, saved for me"]];
  for (const [decision, file, label] of nevers) {
    if (allows(decision) && proposal.always_scope) button(label, () => answer({ type: "save_never", scope: proposal.always_scope, file }), "danger");
  }
  const card = el("div", [...body, feedback, buttons, el("div", [], { class: "outcome" })], { class: "proposal" });
  state.proposals.set(id, card);
  scope.box.append(card);
}

// A plan (plan mode): approve it, edit it (the edited text is carried out instead), or keep
// planning with feedback.
function planCard(id, proposal, scope, body, answer) {
  const text = el("textarea", [], { rows: "10", class: "feedback plan-edit", hidden: "" });
  text.value = proposal.kind.plan;
  const feedback = el("textarea", [], { rows: "2", placeholder: "What should the plan change?", class: "feedback", hidden: "" });
  const buttons = el("div", [], { class: "buttons" });
  const button = (label, action, cls = "") => {
    const b = el("button", [label], { class: cls });
    b.addEventListener("click", action);
    buttons.append(b);
  };
  button("Approve plan", () => answer({ type: "approve" }), "primary");
  if ((proposal.decisions || []).includes("approve_edited")) {
    button("Edit plan…", () => {
      if (text.hidden) {
        text.hidden = false;
        text.focus();
      } else answer({ type: "approve_edited", text: text.value });
    });
  }
  button("Keep planning…", () => {
    if (feedback.hidden) {
      feedback.hidden = false;
      feedback.focus();
    } else answer({ type: "reject", feedback: feedback.value.trim() || undefined });
  }, "danger");
  const card = el("div", [...body, text, feedback, buttons, el("div", [], { class: "outcome" })], { class: "proposal plan-proposal" });
  state.proposals.set(id, card);
  scope.box.append(card);
}

// `/permissions`: the saved rules, numbered, with their file (the same line in every face).
function permissionsView(ok) {
  const rows = [];
  if (ok.message) rows.push(el("div", [ok.message], { class: "muted" }));
  for (const rule of ok.rules) {
    const waiting = rule.active ? "" : " (not applied until `corvid hooks trust` in this project)";
    rows.push(el("div", [`${rule.number}. ${rule.action} ${rule.rule} — ${rule.source}${waiting}`], { class: "permission-rule" }));
  }
  if (!ok.rules.length) rows.push(el("div", ["no saved permission rules: answer \"always\" and save it, or add `permissions` to .corvid/settings.json"], { class: "muted" }));
  else rows.push(el("div", ["/permissions remove N deletes rule N from its file"], { class: "muted" }));
  return el("div", [el("div", ["Permission rules"], { class: "proposal-title" }), ...rows], { class: "proposal closed permissions" });
}

function renderTodos(todos) {
  const list = el("ul");
  for (const todo of todos) list.append(el("li", [todo.content], { class: todo.status }));
  $("#todos").replaceChildren(...(todos.length ? [el("strong", ["Todos"]), list] : []));
}

function tokens(usage) {
  const input = usage.input + usage.cache_read + usage.cache_write;
  return { input, output: usage.output };
}

// The turn's cost as the agent priced it (the usage ledger's prices), when it knows one.
function cost() {
  return state.turnCost == null ? "" : ` · $${state.turnCost.toFixed(4)}`;
}

function showUsage(turn) {
  const t = tokens(turn);
  const c = state.conversationTokens;
  $("#turn-usage").textContent = `turn: ${t.input} in / ${t.output} out${cost()} · conversation: ${c.input + t.input} in / ${c.output + t.output} out`;
}

function renderHistory(history) {
  const scope = scopeFor({ depth: 0 });
  for (const entry of history) {
    if (entry.type === "user") userMessage(entry.text);
    else if (entry.type === "assistant") {
      appendText(scope, entry.text);
      endBlock(scope);
    } else if (entry.type === "tool_call") {
      endBlock(scope);
      toolCard(entry, scope);
    } else if (entry.type === "tool_result") toolResult(entry);
  }
}

function renderConversations() {
  const list = $("#conversations");
  list.replaceChildren();
  for (const conversation of state.conversations) {
    const open = el("button", [conversation.title || "(untitled)"], { class: "open" });
    open.addEventListener("click", () => {
      submit({ type: "open_conversation", conversation_id: conversation.id });
      document.body.classList.remove("sidebar-open");
    });
    const remove = el("button", ["✕"], { class: "delete", title: "delete" });
    remove.addEventListener("click", () => {
      if (confirm(`Delete “${conversation.title || "(untitled)"}”?`)) submit({ type: "delete_conversation", conversation_id: conversation.id });
    });
    const item = el("li", [open, remove], { "data-id": conversation.id });
    if (conversation.id === state.conversationId) item.classList.add("current");
    list.append(item);
  }
}

function setPickers() {
  const model = $("#model");
  const names = new Set([state.model, state.models.default_model, ...Object.keys(state.models.aliases || {}), ...state.models.models.map((m) => m.id)]);
  // Models whose provider has no key (or sign-in) yet go apart, greyed: picking one works once
  // a credential is added in Settings.
  const withoutKey = new Set(state.models.without_key || []);
  const option = (name) => el("option", [name], { value: name });
  const ready = [...names].filter((name) => name && !withoutKey.has(name));
  const apart = [...names].filter((name) => name && withoutKey.has(name));
  const groups = ready.map(option);
  if (apart.length) groups.push(el("optgroup", apart.map(option), { label: "no key yet (add one in Settings)", class: "no-key" }));
  model.replaceChildren(...groups);
  model.value = state.model;
  $("#policy").value = state.policy;
}

function onEvent(event) {
  const msg = event.msg;
  const scope = scopeFor(event);
  switch (msg.type) {
    case "ready":
      // The start of a session's replay (on connecting, after a switch, or a resync): the
      // conversation and the running turn follow; a running turn says so again.
      state.model = msg.model;
      state.policy = msg.approval_policy;
      state.sandbox = msg.sandbox ?? null;
      setPickers();
      if (event.replay) {
        setRunning(false);
        clearPreparing();
      }
      showConversation(msg.conversation_id);
      break;
    case "settings_changed":
      state.model = msg.model;
      state.policy = msg.approval_policy;
      setPickers();
      break;
    case "turn_started":
      setRunning(true);
      state.turnCost = null;
      break;
    case "text_delta":
      appendText(scope, msg.delta);
      break;
    case "reasoning_delta":
      appendReasoning(scope, msg.delta);
      break;
    case "message_completed":
      endBlock(scope);
      break;
    case "tool_call_progress":
      showPreparing(scope, msg);
      break;
    case "tool_call":
      clearPreparing();
      endBlock(scope);
      toolCard(msg, scope);
      break;
    case "tool_result":
      toolResult(msg);
      break;
    case "proposal_closed": {
      const card = state.proposals.get(msg.proposal_id);
      if (card) {
        card.classList.add("closed", msg.outcome);
        card.querySelector(".outcome").textContent = msg.outcome;
        for (const button of card.querySelectorAll("button")) button.disabled = true;
      }
      break;
    }
    case "todos":
      renderTodos(msg.todos);
      break;
    case "subagent_started": {
      const card = state.calls.get(msg.call_id);
      if (card) card.querySelector(".subagent").prepend(el("div", [`${msg.name || msg.agent} subagent: ${msg.description}`], { class: "muted" }));
      break;
    }
    case "subagent_finished": {
      const card = state.calls.get(msg.call_id);
      if (card) card.classList.add(msg.ok ? "ok" : "failed");
      break;
    }
    case "usage":
      if (event.depth === 0) {
        state.turnCost = msg.turn_cost_usd ?? null;
        showUsage(msg.turn);
      }
      break;
    case "error":
      endBlock(scope);
      scope.box.append(el("div", [msg.message, msg.next_action ? ` — ${msg.next_action}` : ""], { class: "error" }));
      break;
    case "warning":
      // A replayed warning is old news (said when the session started, before this tab looked):
      // only live ones pop up.
      if (!event.replay) notice("warning", msg.message);
      break;
    case "turn_finished": {
      if (event.depth > 0) break;
      clearPreparing();
      endBlock(scope);
      setRunning(false);
      showUsage(msg.usage);
      const t = tokens(msg.usage);
      state.conversationTokens.input += t.input;
      state.conversationTokens.output += t.output;
      $("#messages").append(el("div", [`${msg.outcome} · ${msg.steps} ${msg.steps === 1 ? "step" : "steps"} · ${t.input} in / ${t.output} out${cost()}`], { class: `turn-end ${msg.outcome}` }));
      if (!event.replay) notifyIfHidden("corvid: turn " + msg.outcome, `${msg.steps} ${msg.steps === 1 ? "step" : "steps"}`);
      submit({ type: "list_conversations" });
      break;
    }
    case "conversation_opened":
      resetConversation();
      showConversation(msg.conversation.id);
      renderHistory(msg.history);
      api("GET", `/api/conversations/${encodeURIComponent(msg.conversation.id)}`).then((answer) => {
        const total = answer.usage?.total;
        if (total && state.conversationId === msg.conversation.id) {
          state.conversationTokens = { input: total.input, output: total.output };
          $("#turn-usage").textContent = `conversation: ${total.input} in / ${total.output} out`;
        }
      }, () => {});
      submit({ type: "list_conversations" });
      break;
    case "conversation_cleared":
      resetConversation();
      submit({ type: "list_conversations" });
      break;
    case "undone":
      notice("info", `undid turn ${msg.turn}: ${msg.files.map((f) => f.path).join(", ")}`);
      break;
    case "compacted":
      notice("info", `compacted: ${msg.tokens_before} → ${msg.tokens_after} tokens`);
      break;
  }
  scrollDown();
}

// System notifications while the tab is hidden: asked for at the first message sent (a click
// or Enter, as browsers require), shown only when allowed and nobody is looking at the tab.
function askToNotify() {
  if ("Notification" in window && Notification.permission === "default") Notification.requestPermission().catch(() => {});
}

function notifyIfHidden(title, body) {
  if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") return;
  const shown = new Notification(title, { body, tag: "corvid" });
  shown.addEventListener("click", () => { window.focus(); shown.close(); });
}

// A request from the agent (an approval): asked once per card, even when a replay repeats it.
function onRequest(request) {
  const shown = state.proposals.get(request.id);
  if (shown && shown.isConnected) return;
  notifyIfHidden("corvid: approval needed", request.approval?.title || "the agent is waiting for your decision");
  const scope = scopeFor(request);
  endBlock(scope);
  proposalCard(request.id, request.approval, scope);
  scrollDown();
}

// The one reply each submission (or response) gets: what it produced, or why not.
function onReply(reply) {
  // A refused message (a model without image input) gives its images back to the tray.
  if (state.sentImages?.id === reply.id) {
    if (reply.error) restoreImages($("#attachments"), state.sentImages.images);
    state.sentImages = null;
  }
  if (reply.error) {
    notice("error", `${reply.error.message}${reply.error.next_action ? " — " + reply.error.next_action : ""}`);
    return;
  }
  const ok = reply.ok;
  switch (ok.type) {
    case "conversations":
      state.conversations = ok.conversations;
      if (ok.current) state.conversationId = ok.current;
      renderConversations();
      break;
    case "diff":
      for (const turn of ok.turns) $("#messages").append(el("div", [el("div", [`turn ${turn.turn}`], { class: "proposal-title" }), diffView(turn.diff)], { class: "proposal closed diff-turn" }));
      if (!ok.turns.length) notice("info", "no changes");
      break;
    case "tool_servers":
      $("#messages").append(toolServersView(ok.servers));
      break;
    case "permissions":
      $("#messages").append(permissionsView(ok));
      break;
    case "nothing":
      notice("info", ok.message);
      break;
    case "user_messages":
      if (!onUserMessages(ok.messages, submit, notice)) {
        const lines = ok.messages.map((m) => `${m.index + 1}  ${m.text.split("\n")[0]}`);
        $("#messages").append(el("pre", [["/rewind N [files] · /fork N", ...lines].join("\n")], { class: "help" }));
      }
      break;
    case "rewound":
      // The conversation as it is now comes as `conversation_opened`; the message is back in
      // the input, to edit and send.
      $("#input").value = ok.text;
      $("#input").focus();
      notice("info", `rewound: ${ok.removed} of your messages left the conversation${ok.files.length ? "; files put back: " + ok.files.map((f) => f.path).join(", ") : ""}`);
      break;
    case "forked":
      submit({ type: "open_conversation", conversation_id: ok.conversation_id });
      if (ok.text) $("#input").value = ok.text;
      break;
    case "done":
    case "opened":
      submit({ type: "list_conversations" });
      break;
  }
  scrollDown();
}

function showConversation(id) {
  state.conversationId = id;
  try {
    sessionStorage.setItem(SHOWN, id);
  } catch {
    // Storage off: a reload shows the project's current conversation instead.
  }
  renderConversations();
}

function shownConversation() {
  try {
    return state.conversationId || sessionStorage.getItem(SHOWN);
  } catch {
    return state.conversationId;
  }
}

// Whether the user looks at this tab (visible, its window focused): the desktop app shows a
// system notification only when no tab is looked at. Sent with each connect and on change.
const TAB = (crypto.randomUUID?.() || `${Date.now()}-${Math.random()}`).replace(/[^A-Za-z0-9_-]/g, "");
let focusSent = null;
const looking = () => !document.hidden && document.hasFocus();

function reportFocus() {
  const focused = looking();
  if (focused === focusSent || state.socket?.readyState !== WebSocket.OPEN) return;
  focusSent = focused;
  api("POST", "/api/agent/focus", { tab: TAB, focused }).catch(() => { focusSent = null; });
}
for (const event of ["focus", "blur"]) window.addEventListener(event, reportFocus);
document.addEventListener("visibilitychange", reportFocus);

// One socket per tab, on the conversation the tab shows (a reconnect keeps it).
function connect() {
  const shown = shownConversation();
  const params = new URLSearchParams({ tab: TAB, focused: looking() ? "1" : "0" });
  if (shown) params.set("conversation", shown);
  focusSent = looking();
  const query = `?${params}`;
  const socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/agent/ws${query}`);
  state.socket = socket;
  socket.addEventListener("message", (message) => {
    const frame = JSON.parse(message.data);
    if (frame.type === "protocol") {
      // The page is served by the engine it talks to: it speaks the version the server says.
      state.protocol = frame.version;
      state.commands = frame.commands || [];
      document.body.classList.add("connected");
      submit({ type: "hello", version: state.protocol, client: "corvid-web" });
      submit({ type: "list_conversations" });
    } else if (frame.type === "reply") onReply(frame);
    else if (frame.type === "event") onEvent(frame);
    else if (frame.type === "request") onRequest(frame);
  });
  socket.addEventListener("close", (event) => {
    document.body.classList.remove("connected");
    // 1012: the settings changed and the server serves with them now; come back at once.
    setTimeout(connect, event.code === 1012 ? 100 : 1500);
  });
}

// ---- settings, status, usage ----------------------------------------------------------------

// A tab drawn afresh is busy (`aria-busy`) until its data is in and drawn, so neither a screen
// reader nor a test takes the last drawing for this one.
async function drawing(page, draw) {
  page.setAttribute("aria-busy", "true");
  try {
    await draw();
  } finally {
    page.removeAttribute("aria-busy");
  }
}

function field(label, input) {
  return el("label", [el("span", [label]), input], { class: "field" });
}

function loadSettings() {
  return drawing($("#settings"), drawSettings);
}

async function drawSettings() {
  const page = $("#settings");
  let settings;
  try {
    const shown = state.conversationId ? `?conversation=${encodeURIComponent(state.conversationId)}` : "";
    settings = await api("GET", `/api/settings${shown}`);
  } catch (error) {
    page.replaceChildren(el("p", [error.message], { class: "error" }));
    return;
  }
  const defaultModel = el("input", [], { id: "default-model", value: settings.default_model, list: "model-names" });
  const names = el("datalist", [], { id: "model-names" });
  for (const option of $("#model").options) names.append(el("option", [], { value: option.value }));
  const policy = el("select", [], { id: "settings-policy" });
  for (const name of settings.approval_policies) policy.append(el("option", [name], { value: name }));
  policy.value = settings.session?.approval_policy || settings.default_approval_policy;
  const defaultPolicy = el("select", [], { id: "default-policy" });
  for (const name of settings.default_approval_policies || settings.approval_policies) defaultPolicy.append(el("option", [name], { value: name }));
  defaultPolicy.value = settings.default_approval_policy;
  const aliases = el("textarea", [Object.entries(settings.aliases).map(([k, v]) => `${k} = ${v}`).join("\n")], { rows: "4", id: "aliases" });
  const providers = el("table", [el("tr", [el("th", ["provider"]), el("th", ["on"]), el("th", ["base URL"])])], { class: "providers" });
  for (const provider of settings.providers) {
    const enabled = el("input", [], { type: "checkbox", "data-provider": provider.name });
    enabled.checked = provider.enabled;
    const url = el("input", [], { value: provider.base_url, "data-provider-url": provider.name });
    providers.append(el("tr", [el("td", [provider.name]), el("td", [enabled]), el("td", [url])]));
  }
  const general = generalFields(settings.general);
  const save = el("button", ["Save settings"], { class: "primary", id: "save-settings" });
  save.addEventListener("click", async () => {
    const aliasMap = {};
    for (const line of aliases.value.split("\n")) {
      const [name, target] = line.split("=").map((part) => part?.trim());
      if (name && target) aliasMap[name] = target;
    }
    const providerChanges = settings.providers.map((provider) => ({
      name: provider.name,
      enabled: page.querySelector(`[data-provider="${provider.name}"]`).checked,
      base_url: page.querySelector(`[data-provider-url="${provider.name}"]`).value.trim(),
    })).filter((change, index) => change.enabled !== settings.providers[index].enabled || change.base_url !== settings.providers[index].base_url);
    const change = { conversation: state.conversationId || undefined };
    // A new default moves this session too, unless its own policy was changed here as well.
    if (policy.value !== (settings.session?.approval_policy || settings.default_approval_policy)) change.approval_policy = policy.value;
    if (defaultPolicy.value !== settings.default_approval_policy) change.default_approval_policy = defaultPolicy.value;
    if (defaultModel.value.trim() !== settings.default_model) change.default_model = defaultModel.value.trim();
    if (JSON.stringify(aliasMap) !== JSON.stringify(settings.aliases)) change.aliases = aliasMap;
    if (providerChanges.length) change.providers = providerChanges;
    const generalChange = general.change();
    if (Object.keys(generalChange).length) change.general = generalChange;
    try {
      const answer = await api("PUT", "/api/settings", change);
      savedNotice(answer);
      loadSettings();
    } catch (error) {
      notice("error", error.message);
    }
  });
  const keys = el("div", [], { class: "keys" });
  for (const key of settings.keys) {
    const input = el("input", [], { type: "password", autocomplete: "off", placeholder: key.set ? "set — type to replace" : "not set", "data-key": key.variable });
    const store = el("button", ["Save"]);
    store.addEventListener("click", () => saveKey(key.variable, input.value.trim() || null));
    const clear = el("button", ["Clear"], { class: "danger" });
    clear.addEventListener("click", () => saveKey(key.variable, null));
    keys.append(el("div", [el("code", [key.variable]), el("span", [key.set ? "set" : "not set"], { class: key.set ? "badge ok" : "badge" }), input, store, clear], { class: "key" }));
  }
  page.replaceChildren(
    el("h2", ["Settings"]),
    field("Default model", defaultModel), names,
    field("Approval policy (this session)", policy),
    field("Default approval policy (new sessions; saved as approval in config.toml)", defaultPolicy),
    field("Aliases (name = target, one a line)", aliases),
    el("h3", ["Providers"]), providers,
    el("h3", ["Server and account"]), ...general.nodes,
    save,
    el("h3", ["Keys"]), el("p", ["Stored in corvid's env file. A key is never shown again; corvid only says whether it is set. A new key is used from the next request."], { class: "muted" }), keys,
  );
}

// What became of saved settings: in use now, waiting for a restart (with the button that
// restarts), or not applied (and why).
function savedNotice(answer, what = "saved") {
  if (answer.settings_error) notice("error", answer.settings_error);
  else if (answer.restart_needed) {
    notice("warning", `${what}; ${answer.restart_reason || "restart corvid to apply it"}`);
    $("#notices").lastElementChild?.insertBefore(restartButton(), $("#notices").lastElementChild.querySelector(".dismiss"));
  } else notice("info", `${what}; in use now`);
}

// "Restart now": corvid stops as on SIGTERM (streams finish, the ledger is committed) and
// starts again on the saved settings with the same token; the page then moves to the new
// address (the token's cookie goes with it on the same host name).
function restartButton() {
  const button = el("button", ["Restart now"], { class: "restart-now" });
  button.addEventListener("click", async () => {
    button.disabled = true;
    const host = ($("#general-host")?.value || location.hostname).trim();
    const port = ($("#general-port")?.value || location.port).trim();
    const hostPart = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
    const target = `${location.protocol}//${hostPart}:${port}/`;
    try {
      await api("POST", "/api/restart", {});
    } catch (error) {
      button.disabled = false;
      notice("error", `cannot restart: ${error.message}`);
      return;
    }
    notice("info", `restarting corvid at ${target}…`);
    // The old server answers until its streams are done; then the new one starts.
    for (let tries = 0; tries < 300; tries++) {
      const up = await fetch("/livez", { cache: "no-store" }).then((r) => r.ok, () => false);
      if (!up) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (target === `${location.origin}/`) {
      // Same address: wait for it to answer again, then load afresh.
      for (let tries = 0; tries < 150; tries++) {
        if (await fetch("/livez", { cache: "no-store" }).then((r) => r.ok, () => false)) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      location.reload();
    } else {
      setTimeout(() => { location.href = target; }, 1500);
    }
  });
  return button;
}

// The general settings (auth mode, host and port, completions, prompt logging, timeouts): the
// fields, and the change they hold against what was loaded.
function generalFields(current) {
  const select = (id, options, value) => {
    const node = el("select", [], { id });
    for (const option of options) node.append(el("option", [option], { value: option }));
    node.value = value;
    return node;
  };
  const check = (id, value) => {
    const node = el("input", [], { type: "checkbox", id });
    node.checked = value;
    return node;
  };
  const number = (id, value, min) => el("input", [], { type: "number", id, min: String(min), step: "1", value: String(value) });
  const inputs = {
    auth_mode: select("general-auth-mode", current.auth_modes, current.auth_mode),
    host: el("input", [], { id: "general-host", value: current.host }),
    port: number("general-port", current.port, 0),
    completions_backend: select("general-completions-backend", current.completions_backends, current.completions_backend),
    completions_enabled: check("general-completions-enabled", current.completions_enabled),
    log_prompts: check("general-log-prompts", current.log_prompts),
    request_timeout_s: number("general-request-timeout", current.request_timeout_s, 1),
    connect_timeout_s: number("general-connect-timeout", current.connect_timeout_s, 1),
    completions_timeout_s: number("general-completions-timeout", current.completions_timeout_s, 1),
    shutdown_grace_s: number("general-shutdown-grace", current.shutdown_grace_s, 0),
  };
  const nodes = [
    field("xAI auth mode (api_key: XAI_API_KEY; oauth: the SuperGrok sign-in)", inputs.auth_mode),
    field("Host", inputs.host),
    field("Port", inputs.port),
    el("p", [`Host and port need a restart. Keep a loopback host (127.0.0.1, ::1, localhost): corvid has no client authentication, so anyone who reaches the port spends your credits; another address is refused unless corvid runs with --allow-remote${current.allow_remote ? " (it does now)" : ""}.`], { class: "muted", id: "general-loopback-rule" }),
    field("Completions backend (/v1/completions, edit predictions)", inputs.completions_backend),
    field("Completions enabled", inputs.completions_enabled),
    field("Log prompt text (off: prompts never reach the log or the ledger)", inputs.log_prompts),
    field("Request timeout (s)", inputs.request_timeout_s),
    field("Connect timeout (s)", inputs.connect_timeout_s),
    field("Completions timeout (s)", inputs.completions_timeout_s),
    field("Shutdown grace (s)", inputs.shutdown_grace_s),
  ];
  const change = () => {
    const changed = {};
    for (const [key, input] of Object.entries(inputs)) {
      let value;
      if (input.type === "checkbox") value = input.checked;
      else if (input.type === "number") value = Number(input.value);
      else value = input.value.trim();
      if (value !== current[key]) changed[key] = value;
    }
    return changed;
  };
  return { nodes, change };
}

async function saveKey(variable, value) {
  try {
    const answer = await api("PUT", "/api/settings", { keys: { [variable]: value } });
    savedNotice(answer, value === null ? `${variable} cleared` : `${variable} saved`);
    loadSettings();
  } catch (error) {
    notice("error", error.message);
  }
}

// The agent's sandbox as its `ready` said: the mode and the one line for people.
function sandboxLine() {
  if (!state.sandbox) return "agent sandbox: not reported yet";
  return `agent sandbox: ${state.sandbox.mode} · ${state.sandbox.summary}`;
}

function loadStatus() {
  return drawing($("#status"), drawStatus);
}

async function drawStatus() {
  const page = $("#status");
  try {
    const status = await api("GET", "/api/status");
    const rows = status.providers.map((p) => el("tr", [el("td", [p.name]), el("td", [p.kind]), el("td", [p.enabled ? "on" : "off"]), el("td", [p.available ? "ready" : "unavailable"]), el("td", [p.key + (p.key_variable ? ` (${p.key_variable})` : "")]), el("td", [p.base_url]), el("td", [lastError(p.last_error)], { class: p.last_error ? "last-error" : "muted" })]));
    const xai = status.sign_ins.xai;
    const expiry = xai.expires_at ? ` · expires ${new Date(xai.expires_at * 1000).toLocaleString()}` : "";
    page.replaceChildren(
      el("h2", ["Status"]),
      el("p", [`gateway ${status.gateway} · corvid ${status.version}`]),
      ...settingsState(status.settings),
      el("p", [sandboxLine()], { id: "sandbox" }),
      el("table", [el("tr", ["provider", "kind", "on", "state", "key", "base URL", "last error"].map((h) => el("th", [h]))), ...rows], { class: "providers", id: "providers-status" }),
      el("h3", ["Sign-ins"]),
      el("p", [`xAI (${xai.mode}): ${xai.signed_in ? `signed in${xai.email ? ` as ${xai.email}` : ""}${expiry}` : "not signed in"}`]),
      signInButton("xai-browser", "Sign in to xAI (SuperGrok) in the browser"),
      signInButton("xai", "Sign in to xAI with a device code"),
      el("p", [`Zed: ${status.sign_ins.zed.signed_in ? "signed in" : "not signed in"}`]),
      signInButton("zed", "Sign in to Zed"),
      el("div", [], { id: "sign-in-progress" }),
      el("h3", ["Today"]),
      el("p", [`${status.usage_today.requests} requests · ${status.usage_today.input} in / ${status.usage_today.output} out · ${status.usage_today.errors} errors`]),
      ...dailyLines(status.daily),
    );
    api("GET", "/api/sign-in").then(showSignIn, () => {});
  } catch (error) {
    page.replaceChildren(el("p", [error.message], { class: "error" }));
  }
}

// The daily budget and request quota ([store] daily_budget_usd, daily_requests), when set.
function dailyLines(daily) {
  if (!daily) return [];
  const usd = (micros) => `$${(micros / 1e6).toFixed(4)}`;
  const parts = [];
  if (daily.budget) parts.push(`daily budget: ${usd(daily.budget.spent_micros)} of ${usd(daily.budget.cap_micros)} spent, ${usd(daily.budget.held_micros)} held`);
  if (daily.requests) parts.push(`daily requests: ${daily.requests.made} of ${daily.requests.limit}`);
  const resets = new Date(daily.resets_at_ms).toLocaleString();
  return [el("p", [`${parts.join(" · ")} · resets ${resets}`], { id: "daily-allowance" })];
}

// What the server found in the settings files: an edit it could not apply (the running settings
// stay), or a change that waits for a restart.
function settingsState(settings) {
  if (!settings) return [];
  const lines = [];
  if (settings.error) lines.push(el("p", [settings.error], { class: "error", id: "settings-error" }));
  if (settings.restart_needed) lines.push(el("p", [settings.restart_needed, " ", restartButton()], { class: "muted", id: "settings-restart" }));
  return lines;
}

// A provider's last failed call: when, the status (or what failed), the upstream's words.
function lastError(failure) {
  if (!failure) return "none";
  const what = failure.status ? String(failure.status) : failure.cause;
  const at = new Date(failure.at_ms);
  const when = at.toDateString() === new Date().toDateString() ? at.toLocaleTimeString() : at.toLocaleString();
  return `${when} · ${what}${failure.message ? ` · ${failure.message}` : ""}`;
}

function signInButton(account, label) {
  const button = el("button", [label], { "data-sign-in": account });
  button.addEventListener("click", async () => {
    try {
      showSignIn(await api("POST", `/api/sign-in/${account}`, {}));
      pollSignIn();
    } catch (error) {
      notice("error", error.message);
    }
  });
  return button;
}

// The flows' states: a link (and for xAI a code) while waiting, then the outcome.
function showSignIn(states) {
  const box = $("#sign-in-progress");
  if (!box) return;
  box.replaceChildren();
  for (const [account, state] of Object.entries(states)) {
    const name = account === "xai" ? "xAI" : "Zed";
    if (state.state === "waiting") {
      const link = /^https?:/i.test(state.url) ? el("a", [state.url], { href: state.url, target: "_blank", rel: "noopener noreferrer" }) : state.url;
      box.append(el("p", [`${name}: open `, link, state.code ? ` and enter the code ` : "", state.code ? el("code", [state.code], { class: "user-code" }) : ""], { class: "sign-in" }));
    } else if (state.state === "signed_in") {
      box.append(el("p", [`${name}: signed in${state.account ? ` as ${state.account}` : ""}; in use now.`], { class: "sign-in ok" }));
    } else if (state.state === "failed") {
      box.append(el("p", [`${name}: sign-in failed: ${state.message}`], { class: "error" }));
    }
  }
}

function pollSignIn() {
  setTimeout(async () => {
    const states = await api("GET", "/api/sign-in").catch(() => null);
    if (!states) return;
    showSignIn(states);
    if (Object.values(states).some((state) => state.state === "waiting")) pollSignIn();
  }, 1500);
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attributes, children = []) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

function loadUsage() {
  return drawing($("#usage"), drawUsage);
}

async function drawUsage() {
  const page = $("#usage");
  let usage;
  try {
    usage = await api("GET", "/api/usage?days=30");
  } catch (error) {
    page.replaceChildren(el("p", [error.message], { class: "error" }));
    return;
  }
  const days = [...new Set(usage.rows.map((row) => row.day))];
  const models = [...new Set(usage.rows.map((row) => row.model))];
  const colours = ["#4f7cff", "#2bb673", "#f5a623", "#d0021b", "#9013fe", "#50e3c2", "#8b572a"];
  const total = (day) => usage.rows.filter((row) => row.day === day).reduce((sum, row) => sum + row.input + row.output, 0);
  const top = Math.max(1, ...days.map(total));
  const width = Math.max(300, days.length * 40), height = 200;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height + 20}`, width, height: height + 20, class: "chart", role: "img" });
  days.forEach((day, index) => {
    let y = height;
    for (const row of usage.rows.filter((r) => r.day === day)) {
      const h = ((row.input + row.output) / top) * (height - 10);
      y -= h;
      chart.append(svg("rect", { x: index * 40 + 8, y, width: 24, height: h, fill: colours[models.indexOf(row.model) % colours.length] }, [svg("title", {}, [`${day} ${row.model}: ${row.input + row.output} tokens`])]));
    }
    chart.append(svg("text", { x: index * 40 + 20, y: height + 15, "text-anchor": "middle", "font-size": "9" }, [day.slice(5)]));
  });
  const legend = el("div", models.map((model, index) => el("span", [el("i"), model], { class: "legend", "data-colour": String(index % colours.length) })));
  const table = el("table", [el("tr", ["day", "model", "provider", "front end", "requests", "in", "cache hit", "out", "cost"].map((h) => el("th", [h])))], { class: "providers" });
  const hit = (rate) => (rate == null || rate === 0 ? "" : `${Math.round(rate * 100)}%`);
  for (const row of usage.rows) table.append(el("tr", [row.day, row.model, row.provider, row.front_end, row.requests, row.input, hit(row.cache_hit_rate), row.output, row.cost_usd == null ? "" : `$${row.cost_usd.toFixed(4)}`].map((cell) => el("td", [String(cell)]))));
  page.replaceChildren(el("h2", ["Usage, last 30 days"]), usage.rows.length ? chart : el("p", ["No requests yet."], { class: "muted" }), legend, table);
}

// ---- start ----------------------------------------------------------------------------------

async function start() {
  layout();
  try {
    state.models = await api("GET", "/api/models");
  } catch (error) {
    $("#app").replaceChildren(el("div", [
      el("h2", ["corvid"]),
      el("p", ["This page needs the link corvid printed when it started (http://127.0.0.1:…/?token=…). Run corvid open, or copy the link from corvid serve's output."]),
      el("p", [error.message], { class: "muted" }),
    ], { class: "signin" }));
    return;
  }
  connect();
}

start();
