// The dashboard: sign in with an API token, then zones → profiles →
// endpoints kept live from the event stream, with explain and the audit log.
//
// The token lives in sessionStorage (this tab only) and travels only in the
// Authorization header to this origin; the Content-Security-Policy forbids
// any other destination.

import { Api, ApiError, path } from "./api.js";
import { el, say } from "./dom.js";
import { ProfileView } from "./profiles.js";
import { follow } from "./sse.js";
import { loadAudit, wireExplain } from "./tools.js";

const TOKEN_KEY = "tmdns.token";
const TRAFFIC_EVERY_MS = 5000;   // traffic makes no events: it is polled
const RELOAD_EVERY_MS = 30000;   // a safety net under the event stream
const SETTLE_DELAYS_MS = [300, 600, 1200, 2400, 4800];
// Events about one profile (their data names zone and profile).
const PROFILE_EVENTS = new Set(["health", "vantage_health", "override", "quarantine"]);
const $ = (id) => document.getElementById(id);

class Dashboard {
  constructor(api, who) {
    this.api = api;
    this.canWrite = who.scope === "write";
    this.views = new Map();   // "zone/profile" → ProfileView
    this.zones = new Map();   // zone → its section
    this.stop = new AbortController();
    this.timers = [];
    this.loading = null;
    this.again = false;
  }

  async start() {
    await Promise.all([this.loadAll(), this.audit()]);
    follow(this.api, {
      signal: this.stop.signal,
      onEvent: (type, data) => this.onEvent(type, data),
      onLink: (up, resumed) => this.onLink(up, resumed),
      onRejected: () => signOut("The token is no longer accepted: sign in again."),
    });
    this.every(TRAFFIC_EVERY_MS, () => this.eachView((v) => v.refreshTraffic()));
    this.every(RELOAD_EVERY_MS, () => this.loadAll());
  }

  close() {
    this.stop.abort();
    this.timers.forEach(clearInterval);
  }

  every(ms, task) {
    this.timers.push(setInterval(() => { if (!this.stop.signal.aborted) task(); }, ms));
  }

  eachView(task) {
    return Promise.all([...this.views.values()].map((v) => task(v)));
  }

  audit() {
    return loadAudit(this.api, $("audit").tBodies[0], $("audit-error"));
  }

  /** Everything anew, one load at a time: a request during a load runs once
   * more after it, as the first may have read the old state. */
  async loadAll() {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        try {
          await this.loadOnce();
          say($("status"), "");
        } catch (error) {
          if (this.stop.signal.aborted) return;
          if (error instanceof ApiError && error.status === 401) {
            signOut("The token is no longer accepted: sign in again.");
            return;
          }
          say($("status"), "Cannot load the configuration: " +
              (error instanceof ApiError ? error.describe() : String(error)));
        }
      } while (this.again && !this.stop.signal.aborted);
    })();
    try {
      await this.loading;
    } finally {
      this.loading = null;
    }
    return undefined;
  }

  async loadOnce() {
    const zones = await this.api.get("/zones");
    const lists = await Promise.all(zones.map((z) =>
      this.api.get("/zones" + path(z.name) + "/profiles").then((ps) => [z.name, ps])));
    if (this.stop.signal.aborted) return;
    const box = $("profiles"), seen = new Set(), seenZones = new Set();
    for (const [zone, profiles] of lists) {
      seenZones.add(zone);
      const section = this.zoneSection(zone);
      box.append(section);
      for (const profile of profiles) {
        const key = zone + "/" + profile.name;
        seen.add(key);
        let view = this.views.get(key);
        if (view) view.setProfile(profile);
        else {
          view = new ProfileView(this.api, zone, profile, this.canWrite);
          this.views.set(key, view);
        }
        section.append(view.root);
      }
      if (!profiles.length) section.append(this.zoneNote(section));
      else section.querySelectorAll(".zone-empty").forEach((n) => n.remove());
    }
    for (const [key, view] of this.views) {
      if (!seen.has(key)) { view.root.remove(); this.views.delete(key); }
    }
    for (const [zone, section] of this.zones) {
      if (!seenZones.has(zone)) { section.remove(); this.zones.delete(zone); }
    }
    say($("profiles-empty"), zones.length ? "" : "No zones yet: create one with the API.");
    await this.eachView((v) => Promise.all([
      v.refreshHealth().catch(() => undefined),  // gone meanwhile: the next load says so
      v.refreshTraffic(),
    ]));
  }

  zoneSection(zone) {
    let section = this.zones.get(zone);
    if (!section) {
      section = el("section", { class: "zone", "data-zone": zone }, el("h3", { class: "zone-name" }, zone));
      this.zones.set(zone, section);
    }
    return section;
  }

  zoneNote(section) {
    return section.querySelector(".zone-empty") ||
      el("p", { class: "note zone-empty" }, "No profiles in this zone.");
  }

  onLink(up, resumed) {
    const live = $("live");
    live.hidden = false;
    live.dataset.live = up ? "on" : "off";
    live.textContent = up ? "live" : "reconnecting…";
    // A fresh stream starts at the newest event: what happened before it
    // (during the first load, or a drop too long to resume) is read anew.
    if (up && !resumed) this.loadAll();
  }

  /** What the stream says, as the page follows it: a profile's events
   * re-read that profile, a configuration change re-reads what it names (or
   * everything, for a zone or a profile the page does not show yet), and a
   * prober or vantage coming or going re-reads every profile's health. */
  onEvent(type, event) {
    if (type === "gap") {
      this.loadAll();
      return;
    }
    if (!event || typeof event !== "object") return;
    const data = event.data || {};
    if (PROFILE_EVENTS.has(type)) {
      const view = data.profile ? this.views.get(data.zone + "/" + data.profile) : null;
      if (view) {
        if (type === "health") view.expect(data.endpoint, data.to);
        this.settle(view);
      } else if (type === "quarantine") {
        this.loadAll();  // a whole zone
      }
    } else if (type === "config") {
      this.audit();
      const [zone, profile] = String(event.subject || "").split("/");
      const view = profile === undefined ? null : this.views.get(zone + "/" + profile);
      if (view) this.settle(view);
      else this.loadAll();
    } else if (type === "vantage" || type === "prober") {
      this.eachView((v) => this.settle(v));
    }
  }

  /** Re-read one profile soon; again if another event came meanwhile (the
   * read may predate it), and again, backing off, until it shows the state
   * the events announced. A burst of events makes one read. */
  settle(view) {
    view.dirty = true;
    view.settleTries = 0;
    if (view.settling) return;
    view.settling = true;
    const step = async () => {
      if (this.stop.signal.aborted) return;
      view.dirty = false;
      try {
        await view.refresh();
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) this.loadAll();
      }
      view.settleTries += 1;
      if (view.dirty) {
        setTimeout(step, SETTLE_DELAYS_MS[0]);
      } else if (!view.settled && view.settleTries < SETTLE_DELAYS_MS.length) {
        setTimeout(step, SETTLE_DELAYS_MS[view.settleTries]);
      } else {
        view.settling = false;
        view.expected.clear();
      }
    };
    setTimeout(step, SETTLE_DELAYS_MS[0]);
  }
}

let current = null;

function show(signedIn) {
  $("signin").hidden = signedIn;
  $("app").hidden = !signedIn;
  $("sign-out").hidden = !signedIn;
  $("who").hidden = !signedIn;
  if (!signedIn) $("live").hidden = true;
  document.body.dataset.view = signedIn ? "app" : "signin";
}

function signOut(message) {
  if (current) current.close();
  current = null;
  sessionStorage.removeItem(TOKEN_KEY);
  $("profiles").replaceChildren(el("p", { id: "profiles-empty", class: "note", hidden: true }));
  $("audit").tBodies[0].replaceChildren();
  $("explain-result").hidden = true;
  delete document.body.dataset.ready;
  delete document.body.dataset.scope;
  show(false);
  say($("signin-error"), message);
  $("token").focus();
}

async function signIn(token) {
  const api = new Api(token);
  let who;
  try {
    who = await api.get("/whoami");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      return "That token was not accepted (401): check it and try again.";
    }
    return "Cannot sign in: " + (error instanceof ApiError ? error.describe() : String(error));
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  $("token").value = "";
  say($("signin-error"), "");
  $("who").textContent = who.name + " · " + (who.scope === "write" ? "can change" : "read only");
  document.body.dataset.scope = who.scope;
  show(true);
  current = new Dashboard(api, who);
  await current.start();
  document.body.dataset.ready = "true";
  return "";
}

function main() {
  $("profiles").append(el("p", { id: "profiles-empty", class: "note", hidden: true }));
  const form = $("signin-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();  // never a navigation: the token stays out of URLs
    const button = $("signin-button");
    button.disabled = true;
    const problem = await signIn($("token").value.trim());
    button.disabled = false;
    if (problem) {
      sessionStorage.removeItem(TOKEN_KEY);
      say($("signin-error"), problem);
      document.body.dataset.signin = "failed";
    }
  });
  $("sign-out").addEventListener("click", () => signOut(""));
  wireExplain(() => current && current.api, $("explain-form"), $("explain-result"),
              $("explain-error"));
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (!saved) {
    show(false);
    return;
  }
  signIn(saved).then((problem) => {
    if (problem) signOut(problem);
  });
}

main();
