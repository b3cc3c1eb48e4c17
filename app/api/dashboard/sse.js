// /api/v1/events read with fetch(), since EventSource cannot send an
// Authorization header: a server-sent-events parser, and a loop that
// reconnects with Last-Event-ID so nothing said during a drop is missed.

/** Parses an event stream fed in arbitrary chunks (a frame, or a line, may
 * span chunks), as the HTML standard's "interpret an event stream" says. */
export class SseParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = "";
    this.lastId = null;   // survives frames, as Last-Event-ID does
    this.retry = null;    // the server's `retry:` in ms, when it sends one
    this.reset();
  }

  reset() {
    this.type = "";
    this.data = [];
    this.id = undefined;
  }

  push(text) {
    this.buffer += text;
    // A lone "\r" at the end may be the first half of "\r\n": wait for more.
    const lines = this.buffer.split(/\r\n|\r(?!$)|\n/);
    this.buffer = lines.pop();
    for (const line of lines) this.line(line);
  }

  line(line) {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return undefined;  // a comment (keepalive)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.type = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.id = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
    return undefined;
  }

  dispatch() {
    if (this.id !== undefined) this.lastId = this.id;
    const frame = { id: this.lastId, type: this.type || "message", data: this.data.join("\n") };
    const empty = this.data.length === 0;
    this.reset();
    if (!empty) this.onEvent(frame);
  }
}

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
});

/** Follows the stream until `signal` aborts. `onEvent(type, data)` gets each
 * frame with its JSON parsed; `onLink(up)` hears when the stream is up or
 * down; `onRejected(error)` ends it when the token no longer works. */
export async function follow(api, { signal, onEvent, onLink, onRejected, retryMs = 2000 }) {
  let lastId = null;
  let delay = retryMs;
  while (!signal.aborted) {
    try {
      const headers = { Accept: "text/event-stream" };
      if (lastId !== null) headers["Last-Event-ID"] = lastId;
      const response = await api.raw("/events", { headers, signal });
      if (response.status === 401 || response.status === 403) {
        onRejected(response.status);
        return;
      }
      if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
      onLink(true, lastId !== null);
      const parser = new SseParser((frame) => {
        lastId = frame.id;
        let data = null;
        try {
          data = JSON.parse(frame.data);
        } catch {
          data = frame.data;
        }
        onEvent(frame.type, data);
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
        if (parser.retry !== null) delay = parser.retry;
      }
    } catch {
      // A dropped connection (or the abort itself): said below, then retried.
    }
    if (signal.aborted) return;
    onLink(false, false);
    await sleep(delay, signal);
  }
}
