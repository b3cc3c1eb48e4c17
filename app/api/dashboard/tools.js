// The explain form and the audit log.

import { ApiError } from "./api.js";
import { el, say, when } from "./dom.js";

const AUDIT_LIMIT = 50;

function describe(error) {
  return error instanceof ApiError ? error.describe() : String(error.message || error);
}

/** name, type, client → /explain, shown as indented JSON (text, not markup);
 * `currentApi()` is the signed-in session's, wired once for the page. */
export function wireExplain(currentApi, form, result, error) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const api = currentApi();
    if (!api) return;
    const data = new FormData(form);
    const query = new URLSearchParams({ name: String(data.get("name")).trim(),
                                        type: String(data.get("type")) });
    const client = String(data.get("client") || "").trim();
    if (client) query.set("client", client);
    say(error, "");
    try {
      const body = await api.get("/explain?" + query);
      result.textContent = JSON.stringify(body, null, 2);
      result.hidden = false;
      result.dataset.rcode = body.rcode || "";
    } catch (e) {
      result.hidden = true;
      say(error, describe(e));
    }
  });
}

/** The newest changes first: when, who, what, on which resource. */
export async function loadAudit(api, tbody, error) {
  try {
    const entries = await api.get("/audit?limit=" + AUDIT_LIMIT);
    entries.sort((a, b) => b.id - a.id);
    tbody.replaceChildren(...entries.map((e) =>
      el("tr", { "data-audit": e.id },
        el("td", {}, when(e.at)), el("td", {}, e.actor), el("td", {}, e.action),
        el("td", {}, e.resource))));
    say(error, "");
  } catch (e) {
    say(error, "Cannot read the audit log: " + describe(e));
  }
}
