// One profile on the page: its endpoints with their live state, each
// vantage's latest reason, a state timeline, traffic charts and, for a write
// token only, the override and enable controls.
//
// Rows are kept per endpoint and updated in place, so a refresh from the
// event stream never wipes a reason someone is typing.

import { ApiError, path } from "./api.js";
import { answerSplit, timeline, volumeChart } from "./charts.js";
import { el, say, when } from "./dom.js";

const TRAFFIC_MINUTES = 60;
const OVERRIDES = ["down", "drain", "up"];

function describe(error) {
  return error instanceof ApiError ? error.describe() : String(error.message || error);
}

export class ProfileView {
  constructor(api, zone, profile, canWrite) {
    this.api = api;
    this.zone = zone;
    this.name = profile.name;
    this.fqdn = profile.fqdn;
    this.canWrite = canWrite;
    this.rows = new Map();       // endpoint name → its row's parts
    this.expected = new Map();   // endpoint name → the state an event announced
    this.heading = el("h3", {}, profile.fqdn);
    this.facts = el("span", { class: "facts" });
    this.error = el("p", { class: "error", role: "alert", hidden: true });
    this.body = el("tbody");
    const heads = ["Endpoint", "Serves", "State", "Override", "Last check", "Vantages",
                   "History"];
    if (canWrite) heads.push("Change");
    this.table = el("table", { class: "grid endpoints" },
      el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", {}, h)))), this.body);
    this.transitions = el("tbody");
    this.traffic = el("div", { class: "traffic", "data-traffic": "loading" }, "loading traffic");
    this.root = el("section", { class: "profile", "data-profile": profile.fqdn },
      el("header", {}, this.heading, this.facts),
      this.error,
      this.table,
      el("details", { class: "transitions" },
        el("summary", {}, "Recent transitions"),
        el("table", { class: "grid" },
          el("thead", {}, el("tr", {}, ...["When", "Endpoint", "From", "To", "Why"]
            .map((h) => el("th", {}, h)))),
          this.transitions)),
      el("h4", {}, "Traffic, last hour"),
      this.traffic);
    this.setProfile(profile);
  }

  get key() {
    return this.zone + "/" + this.name;
  }

  base() {
    return "/zones" + path(this.zone) + "/profiles" + path(this.name);
  }

  /** Configuration: endpoints, overrides, enabled; and the state DNS sees. */
  setProfile(profile) {
    const parts = [profile.method, "TTL " + profile.ttl + " s"];
    if (!profile.enabled) parts.push("disabled");
    if (profile.quarantine) parts.push("quarantined");
    this.facts.textContent = parts.join(" · ");
    this.method = profile.method;
    this.root.dataset.enabled = String(profile.enabled);
    const names = profile.endpoints.map((e) => e.name);
    for (const [name, row] of this.rows) {
      if (!names.includes(name)) {
        row.tr.remove();
        this.rows.delete(name);
      }
    }
    for (const endpoint of profile.endpoints) {
      const row = this.rows.get(endpoint.name) || this.makeRow(endpoint.name);
      this.body.append(row.tr);  // moves it into the profile's order
      this.fillConfig(row, endpoint);
      // Until /health has been read; it then says the same, and whether stale.
      if (endpoint.state && !row.tr.dataset.state) this.fillState(row, endpoint.state, false);
    }
  }

  makeRow(name) {
    const cell = () => el("td");
    const row = {
      tr: el("tr", { "data-endpoint": name }),
      serves: cell(), state: cell(), override: cell(), check: cell(), vantages: cell(),
      timeline: cell(),
    };
    row.tr.append(el("th", { scope: "row" }, name), row.serves, row.state, row.override,
                  row.check, row.vantages, row.timeline);
    if (this.canWrite) row.tr.append(el("td", {}, this.makeControls(name, row)));
    this.rows.set(name, row);
    return row;
  }

  fillConfig(row, e) {
    const serves = e.address || e.target || (e.child ? "profile " + e.child : "");
    // Only what the profile's method ranks by: a weighted profile's
    // priorities (set by order) would only mislead.
    const extra = [];
    if (this.method === "priority") extra.push("priority " + e.priority);
    if (this.method === "weighted") extra.push("weight " + e.weight);
    row.serves.replaceChildren(serves, extra.length ? el("small", {}, extra.join(", ")) : "");
    row.tr.dataset.enabled = String(e.enabled);
    const o = e.override;
    row.tr.dataset.override = o ? o.state : "";
    if (o) {
      const text = o.state + (o.reason ? ": " + o.reason : "");
      row.override.replaceChildren(
        el("span", { class: "badge override-" + o.state }, text),
        o.until ? el("small", {}, "until " + when(o.until)) : "");
    } else {
      row.override.replaceChildren(e.enabled ? "" : el("span", { class: "badge" }, "disabled"));
    }
    if (row.toggle) row.toggle.textContent = e.enabled ? "Disable" : "Enable";
    if (row.toggle) row.toggle.dataset.enabled = String(e.enabled);
  }

  fillState(row, state, stale) {
    row.tr.dataset.state = state || "unknown";
    row.state.replaceChildren(
      el("span", { class: "badge state state-" + (state || "unknown") }, state || "unknown"),
      stale ? el("small", { class: "stale" }, "stale") : "");
  }

  /** Health: the decided state, its reason, each vantage's view, transitions. */
  setHealth(health) {
    const now = Date.now() / 1000;
    for (const entry of health.endpoints) {
      const row = this.rows.get(entry.name);
      if (!row) continue;
      this.fillState(row, entry.state, entry.stale);
      if (this.expected.get(entry.name) === entry.state) this.expected.delete(entry.name);
      row.check.replaceChildren(entry.reason || "",
        entry.checked_at ? el("small", {}, when(entry.checked_at)) : "");
      row.vantages.replaceChildren(el("ul", { class: "vantages" }, ...entry.vantages.map((v) =>
        el("li", { "data-vantage": v.vantage, "data-state": v.state },
          el("strong", {}, v.vantage), " " + v.state + (v.reason ? " · " + v.reason : ""),
          v.voting ? "" : el("small", {}, " (not voting)")))));
      const own = health.transitions.filter((t) => t.endpoint === entry.name);
      row.timeline.replaceChildren(timeline(own, entry.state, now));
    }
    this.transitions.replaceChildren(...health.transitions.map((t) =>
      el("tr", { "data-endpoint": t.endpoint },
        el("td", {}, when(t.at)), el("td", {}, t.endpoint), el("td", {}, t.from),
        el("td", {}, t.to), el("td", {}, t.reason || ""))));
  }

  async refresh() {
    const [profile, health] = await Promise.all([
      this.api.get(this.base()), this.api.get(this.base() + "/health"),
    ]);
    this.setProfile(profile);
    this.setHealth(health);
  }

  async refreshHealth() {
    this.setHealth(await this.api.get(this.base() + "/health"));
  }

  /** The charts, or "no traffic data" when the server keeps none. */
  async refreshTraffic() {
    let body = null, problem = "";
    try {
      const response = await this.api.raw(this.base() + "/traffic?minutes=" + TRAFFIC_MINUTES);
      if (response.ok) body = await response.json();
      else if (response.status !== 404) problem = "HTTP " + response.status;
    } catch (error) {
      problem = describe(error);
    }
    if (!body || !Array.isArray(body.minutes)) {
      this.traffic.dataset.traffic = "none";
      this.traffic.replaceChildren(el("p", { class: "note" },
        "no traffic data" + (problem ? " (" + problem + ")" : "")));
      return;
    }
    this.traffic.dataset.traffic = "shown";
    this.traffic.replaceChildren(volumeChart(body.minutes),
                                 answerSplit(body.minutes, [...this.rows.keys()]));
  }

  /** Announced by the event stream: re-read until the API says so too (the
   * snapshot that DNS and /health read follows the store within a second). */
  expect(endpoint, state) {
    if (endpoint && state) this.expected.set(endpoint, state);
  }

  get settled() {
    return this.expected.size === 0;
  }

  makeControls(name, row) {
    const state = el("select", { "data-field": "state", "aria-label": "override state" },
      ...OVERRIDES.map((s) => el("option", { value: s }, s)));
    const reason = el("input", { "data-field": "reason", placeholder: "reason", maxLength: 500,
                                 "aria-label": "reason" });
    const minutes = el("input", { "data-field": "minutes", type: "number", min: "1",
                                  placeholder: "minutes", "aria-label": "expires in minutes" });
    const set = el("button", { type: "button", "data-action": "override" }, "Set override");
    const clear = el("button", { type: "button", "data-action": "clear-override" }, "Clear");
    row.toggle = el("button", { type: "button", "data-action": "toggle-enabled" }, "Disable");
    set.addEventListener("click", () => {
      const body = { state: state.value, reason: reason.value.trim(), until: null };
      if (minutes.value !== "") {
        const m = Number(minutes.value);
        if (!(m > 0)) {
          say(this.error, "The expiry must be a positive number of minutes.");
          return;
        }
        body.until = Date.now() / 1000 + m * 60;
      }
      this.change(name, { override: body }, row);
    });
    clear.addEventListener("click", () => this.change(name, { override: null }, row));
    row.toggle.addEventListener("click", () =>
      this.change(name, { enabled: row.toggle.dataset.enabled !== "true" }, row));
    row.buttons = [set, clear, row.toggle];
    return el("div", { class: "controls" }, state, reason, minutes, set, clear, row.toggle);
  }

  /** PATCH one endpoint, from the version just read (If-Match), so a change
   * made meanwhile by someone else is refused rather than undone. */
  async change(name, patch, row) {
    say(this.error, "");
    row.buttons.forEach((b) => { b.disabled = true; });
    try {
      const url = this.base() + "/endpoints" + path(name);
      const { etag } = await this.api.read(url);
      await this.api.patch(url, patch, etag);
      await this.refresh();
    } catch (error) {
      say(this.error, name + ": " + describe(error));
    } finally {
      row.buttons.forEach((b) => { b.disabled = false; });
    }
  }
}
