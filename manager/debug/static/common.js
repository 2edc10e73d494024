// Shared by the debug pages: JSON from the manager, live connections that come back, short text.

/** The JSON at `url`; throws with the server's message when it answers with an error. */
export async function getJSON(url) {
  const res = await fetch(url);
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error ?? `${url}: ${res.status} ${res.statusText}`);
  return body;
}

/** An element with attributes (`text`, `class` and plain ones) and children (nodes or text). */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/** A value in one short line, as `etcd-operator journal` prints it: `{member: demo-0, peers: [a, b]}`. */
export function compact(value, max = 120) {
  const text = render(value);
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function render(v) {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'string') return /^[\w.:/@+=-]*$/.test(v) && v !== '' ? v : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(render).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}: ${render(x)}`)
      .join(', ')}}`;
  }
  return String(v);
}

/** How long ago an ISO time was: `42s`, `3m 05s`, `2h 10m`, `4d 3h`. */
export function ago(iso, now = Date.now()) {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  const pad = (n) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** The time of day of an ISO time, in UTC with milliseconds, as the journal writes it. */
export const clock = (iso) => iso.slice(11, 23);

/** Milliseconds or seconds between two ISO times: `+250ms`, `+1.5s`. */
export function took(from, to) {
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms)) return '';
  return ms < 1000 ? `+${ms}ms` : `+${(ms / 1000).toFixed(1)}s`;
}

/**
 * Opens the server-sent events at `url`, telling each named event's data to `handlers[name]`.
 * The browser reconnects by itself (resuming after the last event's id); when the server refused
 * the connection (no journal yet, too many pages open), a new one is opened after 2 s.
 */
export function live(url, after, handlers) {
  let last = after;
  const status = document.getElementById('status');
  const say = (text, cls) => {
    if (!status) return;
    status.textContent = text;
    status.className = `status ${cls}`;
  };
  const open = () => {
    const source = new EventSource(`${url}${url.includes('?') ? '&' : '?'}after=${last}`);
    source.onopen = () => say('live', 'ok');
    source.onerror = () => {
      say('reconnecting…', 'bad');
      if (source.readyState === EventSource.CLOSED) setTimeout(open, 2000);
    };
    for (const [name, handle] of Object.entries(handlers)) {
      source.addEventListener(name, (event) => {
        if (event.lastEventId) last = Number(event.lastEventId);
        handle(JSON.parse(event.data), event);
      });
    }
  };
  open();
}

/** Shows an error in the page's #error line. */
export function showError(err) {
  const line = document.getElementById('error');
  if (!line) return;
  line.textContent = err instanceof Error ? err.message : String(err);
  line.hidden = false;
}
