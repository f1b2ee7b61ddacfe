// Rewind and fork from the page: each of your messages has actions (edit: go back to it and
// send it again; edit with files: also put back the files the later turns changed; fork: a new
// conversation holding everything before it). The agent numbers the messages it can go back
// to (`user_messages`); the page finds the clicked one there by its text and its rank among
// messages with that text.

import { el } from "/assets/markdown.js";

// The action waiting for the agent's list of messages.
let pending = null;

// The actions shown on a user message `node` saying `text`; `submit` sends an op.
export function messageActions(node, text, submit) {
  const action = (label, title, kind) => {
    const button = el("button", [label], { class: "message-action", title, type: "button" });
    button.addEventListener("click", () => {
      const same = [...document.querySelectorAll("#messages .user")].filter((other) => other.dataset.text === text);
      pending = { text, rank: same.indexOf(node), kind };
      submit({ type: "user_messages" });
    });
    return button;
  };
  node.dataset.text = text;
  node.append(el("span", [
    action("edit", "go back to this message and edit it (the rest of the conversation leaves it)", "rewind"),
    action("edit + files", "go back to this message and put back the files the later turns changed", "rewind-files"),
    action("fork", "copy the conversation up to this message into a new one", "fork"),
  ], { class: "message-actions" }));
}

// The agent's list of messages: the waiting action goes on with the clicked one; `false`
// when none waited (the caller shows the list).
export function onUserMessages(messages, submit, notice) {
  if (!pending) return false;
  const { text, rank, kind } = pending;
  pending = null;
  const matching = messages.filter((message) => message.text === text);
  const picked = matching[Math.max(rank, 0)] ?? matching[matching.length - 1];
  if (!picked) {
    notice("error", "the agent cannot go back to that message (it was summarised, or written by a command)");
    return true;
  }
  if (kind === "fork") submit({ type: "fork", message: picked.index });
  else submit({ type: "rewind", message: picked.index, restore_files: kind === "rewind-files" });
  return true;
}
