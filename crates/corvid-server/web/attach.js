// Images attached to the next message: pasted (a screenshot on the clipboard) or dropped on
// the composer. Each shows as a thumbnail chip with a × to remove it before sending; sending
// takes them all (the `images` of the `send` op, base64 as the protocol carries them).

import { el } from "/assets/markdown.js";

// The kinds every provider takes, and the most bytes one image may have (the agent's cap).
const KINDS = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const CAP = 5 * 1024 * 1024;

let attached = []; // {media_type, data, name}

// Listens for pastes and drops on `input`; chips go into `tray`; `notice(kind, text)` says
// why a file was not attached.
export function attachImages(input, tray, notice) {
  const add = (files) => {
    for (const file of files) {
      if (!KINDS.includes(file.type)) {
        notice("error", `${file.name || "the file"} is not a PNG, JPEG, GIF or WebP image`);
        continue;
      }
      if (file.size > CAP) {
        notice("error", `${file.name || "the image"} is ${(file.size / 1048576).toFixed(1)} MB, over the 5 MB an image may be`);
        continue;
      }
      const reader = new FileReader();
      reader.addEventListener("load", () => {
        const url = String(reader.result);
        const image = { media_type: file.type, data: url.slice(url.indexOf(",") + 1), name: file.name || "pasted image" };
        attached.push(image);
        draw(tray);
      });
      reader.readAsDataURL(file);
    }
  };
  input.addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files || [])].filter((file) => file.type.startsWith("image/"));
    if (files.length) {
      event.preventDefault();
      add(files);
    }
  });
  const composer = input.closest("#composer") || input;
  composer.addEventListener("dragover", (event) => {
    if ([...(event.dataTransfer?.types || [])].includes("Files")) {
      event.preventDefault();
      composer.classList.add("dropping");
    }
  });
  composer.addEventListener("dragleave", () => composer.classList.remove("dropping"));
  composer.addEventListener("drop", (event) => {
    composer.classList.remove("dropping");
    const files = [...(event.dataTransfer?.files || [])];
    if (files.length) {
      event.preventDefault();
      add(files);
    }
  });
}

function draw(tray) {
  tray.replaceChildren(...attached.map((image, index) => {
    const remove = el("button", ["×"], { class: "chip-remove", title: "remove", type: "button" });
    remove.addEventListener("click", () => {
      attached.splice(index, 1);
      draw(tray);
    });
    const thumb = el("img", [], { src: `data:${image.media_type};base64,${image.data}`, alt: image.name });
    return el("span", [thumb, el("span", [image.name]), remove], { class: "image-chip", title: image.name });
  }));
  tray.hidden = attached.length === 0;
}

// Whether any image waits to be sent.
export function hasImages() {
  return attached.length > 0;
}

// The images to send, as the protocol's `images`; the tray empties.
export function takeImages(tray) {
  const images = attached.map(({ media_type, data }) => ({ type: "base64", media_type, data }));
  attached = [];
  draw(tray);
  return images;
}

// Images taken by a send the agent refused, back in the tray (before any attached since).
export function restoreImages(tray, images) {
  attached = [...images.map(({ media_type, data }, index) => ({ media_type, data, name: `image ${index + 1}` })), ...attached];
  draw(tray);
}
