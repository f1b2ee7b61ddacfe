// Markdown to DOM nodes, safely: text only ever becomes text nodes (never HTML), and links
// only http(s)/mailto. A model's answer cannot run script or load anything by itself.
// Covers what models write: fenced code, headings, lists, quotes, paragraphs, `code`,
// **bold**, *italic*, [links](https://…).

const SAFE_LINK = /^(https?:|mailto:)/i;

function el(tag, children = [], attributes = {}) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

// Inline spans of one line of text, as nodes.
function inline(text) {
  const out = [];
  const pattern = /(`+)([^`]|[^`][\s\S]*?[^`])\1|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    if (match[2] !== undefined) out.push(el("code", [match[2]]));
    else if (match[3] !== undefined) out.push(el("strong", inline(match[3])));
    else if (match[4] !== undefined) out.push(el("em", inline(match[4])));
    else if (SAFE_LINK.test(match[6])) {
      out.push(el("a", inline(match[5]), { href: match[6], rel: "noopener noreferrer", target: "_blank" }));
    } else out.push(match[0]);
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// The whole text as a fragment of block nodes. An unclosed fence (mid-stream) renders as code.
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  const lines = text.split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      const code = el("code", [body.join("\n")]);
      if (fence[2]) code.dataset.lang = fence[2];
      fragment.append(el("pre", [code]));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      fragment.append(el(`h${Math.min(heading[1].length + 2, 6)}`, inline(heading[2])));
      i++;
      continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        list.append(el("li", inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""))));
        i++;
      }
      fragment.append(list);
      continue;
    }
    if (/^>\s?/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^>\s?/.test(lines[i])) quoted.push(lines[i++].replace(/^>\s?/, ""));
      fragment.append(el("blockquote", [renderMarkdown(quoted.join("\n"))]));
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const paragraph = [];
    while (i < lines.length && lines[i].trim() !== "" && !/^(\s*```|#{1,6}\s|>|\s*([-*+]|\d+[.)])\s)/.test(lines[i])) {
      paragraph.push(lines[i++]);
    }
    const p = el("p");
    paragraph.forEach((text, index) => {
      if (index > 0) p.append(el("br"));
      p.append(...inline(text));
    });
    fragment.append(p);
  }
  return fragment;
}

export { el };
