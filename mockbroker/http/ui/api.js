// The console's only way to the broker: the documented HTTP control API (docs/http.md,
// /openapi.json). Every call names its path template exactly as the OpenAPI document spells it
// ("/groups/{group_id}"), so tests/sidecar/test_console.py can check the console against the
// document. Requests go to the server that served this page, nowhere else.

const TOKEN_KEY = "mockbroker.console.token";
// The API's root: this module is served at <root>/ui/api.js.
const ROOT = new URL("../", import.meta.url);

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, body) {
    const detail = body && body.error ? body.error : `HTTP ${status}`;
    super(body && body.field ? `${detail} (${body.field})` : detail);
    this.status = status;
    this.body = body;
  }
}

function url(template, path = {}, query = {}) {
  const filled = template.replace(/\{(\w+)\}/g, (_, name) => {
    if (!(name in path)) throw new Error(`no value for {${name}} in ${template}`);
    return encodeURIComponent(String(path[name]));
  });
  const out = new URL(filled.slice(1), ROOT);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") out.searchParams.set(key, String(value));
  }
  return out;
}

function headers(extra = {}) {
  const out = { Accept: "application/json", ...extra };
  if (token()) out.Authorization = `Bearer ${token()}`;
  return out;
}

async function call(method, template, { path, query, body } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(url(template, path, query), init);
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const api = {
  get: (template, options) => call("GET", template, options),
  post: (template, options) => call("POST", template, options),
  put: (template, options) => call("PUT", template, options),
  delete: (template, options) => call("DELETE", template, options),

  // GET /events/stream (Server-Sent Events) read over fetch: EventSource cannot send the
  // Authorization header. Reconnects with the last seq seen (the server replays what followed).
  async stream(template, { query = {}, onEvent, onStatus }) {
    let since = query.since_seq || 0;
    for (;;) {
      try {
        const response = await fetch(url(template, {}, { ...query, since_seq: since }), {
          headers: headers({ Accept: "text/event-stream" }),
        });
        if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
        onStatus(true, "live");
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
            if (!data) continue; // a comment (keep-alive)
            const event = JSON.parse(data);
            since = Math.max(since, event.seq);
            onEvent(event);
          }
        }
        onStatus(false, "stream ended; reconnecting…");
      } catch (error) {
        onStatus(false, `not live: ${error.message}; retrying…`);
      }
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  },
};
