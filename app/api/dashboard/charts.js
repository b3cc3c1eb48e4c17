// Charts drawn by hand in SVG: query volume per minute, each endpoint's
// share of the answers, and an endpoint's state over time. Colours are CSS
// classes (dashboard.css), so the style sheet alone decides how they look.

import { el, when } from "./dom.js";

const template = () => document.getElementById("chart-template").content.firstElementChild;
// The namespace of an <svg> the HTML parser made (see index.html).
const ns = () => template().namespaceURI;

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(ns(), tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  node.append(...children);
  return node;
}

function canvas(width, height, label) {
  const root = template().cloneNode(false);
  root.setAttribute("viewBox", `0 0 ${width} ${height}`);
  root.setAttribute("preserveAspectRatio", "none");
  root.setAttribute("role", "img");
  root.removeAttribute("aria-hidden");
  root.setAttribute("aria-label", label);
  return root;
}

const title = (text) => svg("title", {}, text);

/** Queries per minute as bars, oldest on the left; the total and the peak
 * are said in words beside it, for readers and for tests. */
export function volumeChart(minutes) {
  const width = 600, height = 100;
  const busiest = minutes.reduce((most, m) => Math.max(most, m.queries), 0);
  const peak = Math.max(1, busiest);
  const total = minutes.reduce((sum, m) => sum + m.queries, 0);
  const root = canvas(width, height, `${total} queries in ${minutes.length} minutes`);
  root.classList.add("volume");
  const step = width / Math.max(1, minutes.length);
  minutes.forEach((m, i) => {
    const h = (m.queries / peak) * (height - 4);
    const bar = svg("rect", {
      class: "bar", x: (i * step + step * 0.1).toFixed(2), y: (height - h).toFixed(2),
      width: (step * 0.8).toFixed(2), height: h.toFixed(2),
    }, title(`${when(m.at)}: ${m.queries} queries`));
    root.append(bar);
  });
  root.append(svg("line", { class: "axis", x1: 0, y1: height - 0.5, x2: width, y2: height - 0.5 }));
  const box = el("figure", { class: "chart-box", "data-chart": "volume", "data-queries": total },
    root,
    axis(minutes.length + " min ago"),
    el("figcaption", {}, `${total} ${total === 1 ? "query" : "queries"} in the last ` +
                         `${minutes.length} min, peak ${busiest}/min`));
  return box;
}

/** Each endpoint's share of the answers over the window: one stacked bar,
 * and a legend with the totals. */
export function answerSplit(minutes, endpointNames) {
  const totals = new Map(endpointNames.map((name) => [name, 0]));
  for (const m of minutes) {
    for (const [name, count] of Object.entries(m.answers || {})) {
      totals.set(name, (totals.get(name) || 0) + count);
    }
  }
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  const width = 600, height = 18;
  const root = canvas(width, height, `answers per endpoint, ${all} in all`);
  root.classList.add("split");
  const legend = el("ul", { class: "legend" });
  let x = 0;
  [...totals.entries()].forEach(([name, count], i) => {
    const share = all ? count / all : 0;
    const series = "series-" + (i % 8);
    if (share > 0) {
      root.append(svg("rect", {
        class: series, x: x.toFixed(2), y: 0, width: (share * width).toFixed(2), height,
      }, title(`${name}: ${count} (${Math.round(share * 100)}%)`)));
    }
    x += share * width;
    legend.append(el("li", { "data-answers": count, "data-series-name": name },
      el("span", { class: "swatch " + series }),
      `${name}: ${count}` + (all ? ` (${Math.round(share * 100)}%)` : "")));
  });
  if (!all) root.append(svg("rect", { class: "empty", x: 0, y: 0, width, height }));
  return el("figure", { class: "chart-box", "data-chart": "split", "data-answers": all },
    root, el("figcaption", {}, all ? "answers handed out per endpoint" : "no answers yet"),
    legend);
}

/** "40 s ago", "12 min ago", "1 h ago". */
function ago(seconds) {
  if (seconds >= 3600) return Math.round(seconds / 3600) + " h ago";
  if (seconds >= 60) return Math.round(seconds / 60) + " min ago";
  return Math.max(1, Math.round(seconds)) + " s ago";
}

function axis(left) {
  return el("span", { class: "axis-labels" }, left, el("span", {}, "now"));
}

/** An endpoint's state over time, from its transitions (any order) and its
 * state now: the last hour, or since the oldest transition known when that
 * is more recent (a new endpoint's bar is not an hour of "checking"). */
export function timeline(transitions, current, now) {
  const width = 300, height = 14;
  const steps = transitions
    .map((t) => ({ at: Date.parse(t.at) / 1000, from: t.from, to: t.to }))
    .filter((t) => Number.isFinite(t.at))
    .sort((a, b) => a.at - b.at);
  const oldest = steps.length ? steps[0].at : now - 3600;
  const windowSeconds = Math.min(3600, Math.max(1, now - oldest));
  const start = now - windowSeconds;
  const before = steps.filter((t) => t.at <= start).pop();
  const inside = steps.filter((t) => t.at > start);
  let state = before ? before.to : inside.length ? inside[0].from : current || "unknown";
  let from = start;
  const spans = [];
  for (const t of inside) {
    spans.push({ state, from, to: t.at });
    state = t.to;
    from = t.at;
  }
  spans.push({ state: current || state, from, to: now });
  const root = canvas(width, height, "state since " + ago(windowSeconds));
  root.classList.add("timeline");
  const scale = (t) => ((t - start) / windowSeconds) * width;
  for (const s of spans) {
    const x = scale(s.from), w = Math.max(1, scale(s.to) - x);
    if (s.to - s.from <= 0 && s !== spans[spans.length - 1]) continue;
    root.append(svg("rect", { class: "state-" + s.state, x: x.toFixed(2), y: 0,
                              width: w.toFixed(2), height },
      title(`${s.state} from ${when(s.from)}`)));
  }
  return el("div", { class: "timeline-box", "data-transitions": inside.length },
    root, axis(ago(windowSeconds)));
}
