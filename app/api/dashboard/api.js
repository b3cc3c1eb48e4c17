// The API, as the page calls it: same origin only, the token in a header
// (never in a URL), errors turned into words a person can act on.

const BASE = "api/v1";  // relative: the page is served at the API's root

export class ApiError extends Error {
  constructor(status, message, details = []) {
    super(message);
    this.status = status;
    this.details = details;
  }

  /** The message and each field's problem, one per line. */
  describe() {
    const lines = [this.message];
    for (const d of this.details) {
      if (d && d.message) lines.push((d.field ? d.field + ": " : "") + d.message);
    }
    return [...new Set(lines)].join("\n");
  }
}

/** An error from a response body: the API's {"error": {message, details}}
 * envelope, or RFC 9457 problem+json (`detail`, `errors`) from a proxy. */
async function errorOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const fallback = "HTTP " + response.status + " " + response.statusText;
  if (body && body.error) {
    return new ApiError(response.status, body.error.message || fallback,
                        body.error.details || []);
  }
  if (body && (body.detail || body.title)) {
    return new ApiError(response.status, body.detail || body.title, body.errors || []);
  }
  return new ApiError(response.status, fallback);
}

export class Api {
  constructor(token) {
    this.token = token;
  }

  headers(more = {}) {
    return { Authorization: "Bearer " + this.token, Accept: "application/json", ...more };
  }

  /** The response itself, for callers that read headers or stream the body. */
  async raw(path, options = {}) {
    return fetch(BASE + path, {
      cache: "no-store",
      credentials: "omit",
      ...options,
      headers: this.headers(options.headers),
    });
  }

  /** The JSON body of a successful call; ApiError otherwise. */
  async get(path) {
    const response = await this.raw(path);
    if (!response.ok) throw await errorOf(response);
    return response.json();
  }

  /** GET with the ETag, for a change that must not undo someone else's. */
  async read(path) {
    const response = await this.raw(path);
    if (!response.ok) throw await errorOf(response);
    return { body: await response.json(), etag: response.headers.get("ETag") };
  }

  async patch(path, body, etag) {
    const headers = { "Content-Type": "application/json" };
    if (etag) headers["If-Match"] = etag;
    const response = await this.raw(path, {
      method: "PATCH", headers, body: JSON.stringify(body),
    });
    if (!response.ok) throw await errorOf(response);
    return response.json();
  }
}

/** Path segments for a zone, profile, endpoint: always encoded. */
export function path(...segments) {
  return segments.map((s) => "/" + encodeURIComponent(s)).join("");
}
