// Building DOM from data: createElement and textContent only, never markup
// from strings, so a name or reason from the API is always shown as text.

/** An element with attributes (`class`, `data-*`, properties for the rest)
 * and children (nodes, or strings as text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  setAttributes(node, attrs);
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function setAttributes(node, attrs) {
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("data-") || key.startsWith("aria-")) {
      node.setAttribute(key, String(value));
    } else node[key] = value;
  }
}

/** Show `message` in a (hidden when empty) element. */
export function say(node, message) {
  node.textContent = message || "";
  node.hidden = !message;
}

/** A time for people: local clock time, with the date when not today. */
export function when(value) {
  if (value === null || value === undefined) return "";
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const today = new Date().toDateString() === date.toDateString();
  return today ? date.toLocaleTimeString() : date.toLocaleString();
}
