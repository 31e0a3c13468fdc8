// One element builder for the page's modules: h("p", {class: "x", onclick: fn}, "text", node, [more]).
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Say `message` to screen readers (the page's polite live region), without moving focus. */
export function announce(message) {
  const box = document.getElementById("announce");
  if (!box) return;
  box.textContent = "";
  // a fresh text node after a tick: the same words twice in a row are announced again
  setTimeout(() => (box.textContent = message), 50);
}
