// The index: one line per object, replaced as its machine steps.
import { ago, el, getJSON, live, showError } from './common.js';

const KINDS = ['EtcdCluster', 'EtcdMember', 'EtcdSnapshot', 'EtcdSnapshotSchedule'];
const lines = new Map();
const body = document.querySelector('#objects tbody');
const all = document.getElementById('all');
let changed = new Set();

// Stuck for over a minute: listed first and marked, so a cluster that cannot start does not
// look like any cluster starting.
const STUCK_AFTER_MS = 60_000;
const stuckLong = (l) =>
  l.stuck !== null && l.stuck !== undefined && (!l.since || Date.now() - Date.parse(l.since) > STUCK_AFTER_MS);

const order = (a, b) =>
  Number(stuckLong(b)) - Number(stuckLong(a)) ||
  a.namespace.localeCompare(b.namespace) ||
  (a.cluster ?? a.name).localeCompare(b.cluster ?? b.name) ||
  KINDS.indexOf(a.kind) - KINDS.indexOf(b.kind) ||
  a.name.localeCompare(b.name, undefined, { numeric: true });

function row(line) {
  const error = line.lastError;
  return el(
    'tr',
    {
      'data-uid': line.uid,
      class: [changed.has(line.uid) ? 'changed' : '', stuckLong(line) ? 'stuck' : ''].join(' ').trim(),
    },
    el('td', { text: line.namespace }),
    el('td', { text: line.kind }),
    el('td', {}, el('a', { href: `/objects/${encodeURIComponent(line.uid)}`, text: line.name })),
    el(
      'td',
      { class: 'state' },
      el('code', { text: line.state }),
      line.openIntents > 0 ? el('span', { class: 'badge', text: `${line.openIntents} open` }) : null,
    ),
    el('td', { class: 'step', title: line.message, text: line.step }),
    el('td', {
      class: 'since',
      'data-since': line.since ?? '',
      title: line.since ?? '',
      text: line.since ? ago(line.since) : '–',
    }),
    error?.current || !line.stuck
      ? el(
          'td',
          { class: error ? (error.current ? 'error-cell current' : 'error-cell old') : '', title: error?.at ?? '' },
          error ? `#${error.seq} ${error.intent}: ${error.code} ${error.message}` : '',
        )
      : el('td', { class: 'error-cell current', title: line.stuck }, `stuck: ${line.stuck}`),
  );
}

function render() {
  const shown = [...lines.values()].filter((l) => all.checked || l.running !== false).sort(order);
  body.replaceChildren(...shown.map(row));
  document.getElementById('not-running').textContent = String(
    [...lines.values()].filter((l) => l.running === false).length,
  );
  document.getElementById('empty').hidden = lines.size > 0;
  changed = new Set();
}

async function load() {
  const { lsn, objects } = await getJSON('/api/objects');
  lines.clear();
  for (const line of objects) lines.set(line.uid, line);
  render();
  return lsn;
}

all.addEventListener('change', render);
setInterval(() => {
  for (const cell of body.querySelectorAll('td.since[data-since]')) {
    if (cell.dataset.since) cell.textContent = ago(cell.dataset.since);
  }
}, 1000);

load()
  .then((lsn) =>
    live('/api/events', lsn, {
      object: ({ line }) => {
        lines.set(line.uid, line);
        changed.add(line.uid);
        render();
      },
      objects: ({ objects }) => {
        lines.clear();
        for (const line of objects) lines.set(line.uid, line);
        render();
      },
      gone: ({ uid }) => {
        lines.delete(uid);
        render();
      },
      reset: () => void load().catch(showError),
    }),
  )
  .catch(showError);
