// One object: its machine's chart with where it stands and the path it took, beside its timeline.
// The chart is drawn once (by Graphviz, on the server); each update only moves classes on it.
import { ago, clock, compact, el, getJSON, live, showError, took } from './common.js';

const SVG = 'http://www.w3.org/2000/svg';
/** Step entries kept on the page; older ones are dropped and read again with "older steps". */
const MAX_STEPS = 300;
const uid = decodeURIComponent(location.pathname.split('/').pop() ?? '');
const api = `/api/objects/${encodeURIComponent(uid)}`;
const $ = (id) => document.getElementById(id);

let svg;
let size = { width: 0, height: 0 };
const nodes = new Map();
const clusters = new Map();
let current;
const steps = new Map(); // seq -> { li, lsns, intents: Map(intentId -> element), cause }
const seen = new Set();
let older = null;

function mountChart(text) {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  svg = document.importNode(doc.documentElement, true);
  size = { width: parseFloat(svg.getAttribute('width')), height: parseFloat(svg.getAttribute('height')) };
  $('chart').replaceChildren(svg);
  for (const g of svg.querySelectorAll('g.node')) nodes.set(g.querySelector('title')?.textContent, g);
  for (const g of svg.querySelectorAll('g.cluster')) clusters.set(g.querySelector('title')?.textContent, g);
  zoom();
}

function zoom() {
  const z = Number($('zoom').value);
  svg.setAttribute('width', `${size.width * z}pt`);
  svg.setAttribute('height', `${size.height * z}pt`);
}

/** A small label on the chart: right of `box` (an edge's label, so stacked labels stay clear), or under it. */
function badge(box, text, cls, beside = true) {
  const b = box.getBBox();
  const t = document.createElementNS(SVG, 'text');
  t.setAttribute('x', String(beside ? b.x + b.width + 4 : b.x));
  t.setAttribute('y', String(beside ? b.y + b.height - 2 : b.y + b.height + 10));
  t.setAttribute('class', `badge ${cls}`);
  t.textContent = text;
  return t;
}

/** Colours the chart as the overlay says: the current state, the path taken, what it waits for. */
function paint(o, seq) {
  svg.classList.add('overlaid');
  for (const e of svg.querySelectorAll('.now, .taken, .waits')) e.classList.remove('now', 'taken', 'waits');
  for (const b of svg.querySelectorAll('.badge')) b.remove();
  if (!o) return;
  const node = nodes.get(o.current);
  node?.classList.add('now');
  for (let i = o.current.lastIndexOf('.'); i > 0; i = o.current.lastIndexOf('.', i - 1)) {
    clusters.get(`cluster_${o.current.slice(0, i)}`)?.classList.add('now');
  }
  for (const [id, use] of Object.entries(o.edges)) {
    for (const g of svg.getElementsByClassName(id)) {
      g.classList.add('taken');
      g.style.setProperty('--w', String(Math.min(1.5 + Math.log2(use.count), 5)));
      const label = g.querySelectorAll('text');
      const order = use.order.length ? ` #${use.order.join(' #')}` : '';
      if (label.length) g.append(badge(label[label.length - 1], `x${use.count}${order}`, 'use'));
    }
  }
  for (const id of o.waiting) for (const g of svg.getElementsByClassName(id)) g.classList.add('waits');
  if (node) node.append(badge(node, `NOW (step #${seq})`, 'here', false));
}

function show(view) {
  document.title = `etcd-operator: ${view.kind} ${view.namespace}/${view.name}`;
  $('title').textContent = `${view.kind} ${view.namespace}/${view.name}`;
  $('state').textContent = view.state;
  $('seq').textContent = `after step #${view.seq}`;
  $('since').dataset.since = view.since ?? '';
  $('since').textContent = view.since ? `${clock(view.since)} (${ago(view.since)})` : 'before the kept steps';
  $('step').textContent = view.step;
  $('message').textContent = view.message;
  const problem = view.overlay?.problem ?? view.overlayError;
  $('problem').hidden = !problem;
  $('problem').textContent = problem ?? '';
  $('svg-link').href = `${api}/chart.svg`;
  document.body.dataset.state = view.state;
  document.body.dataset.seq = String(view.seq);
  if (!svg) return;
  paint(view.overlay, view.seq);
  const moved = view.overlay && view.overlay.current !== current;
  if (view.overlay) current = view.overlay.current;
  const node = nodes.get(current);
  if (moved && node) {
    for (const e of svg.querySelectorAll('.moved')) e.classList.remove('moved');
    void node.getBBox(); // a layout in between restarts the animation when it comes back
    node.classList.add('moved');
    if ($('follow').checked) node.scrollIntoView({ block: 'center', inline: 'center' });
  }
}

// The timeline: a step per entry, newest first; each intent with its outcome and why it was asked.

function stepEntry(seq) {
  let s = steps.get(seq);
  if (s) return s;
  const li = el('li', { class: 'step', 'data-seq': seq }, el('div', { class: 'head' }), el('ul', { class: 'intents' }));
  s = { li, lsns: [], intents: new Map(), cause: { event: '?', from: '?' } };
  steps.set(seq, s);
  const list = $('steps');
  const after = [...list.children].find((c) => Number(c.dataset.seq) < seq);
  list.insertBefore(li, after ?? null);
  return s;
}

function outcomeText(row, asked) {
  const ms = asked ? ` (${took(asked, row.at)}${row.recovered ? ', recovered after a restart' : ''})` : '';
  if (!row.ok) return [`error ${row.code ?? ''}: ${row.message ?? ''}${ms}`, 'outcome failed'];
  const result = row.data && Object.keys(row.data).length ? ` ${compact(row.data, 80)}` : '';
  return [`ok${result}${ms}`, 'outcome ok'];
}

function addRow(row) {
  const s = stepEntry(row.seq);
  s.lsns.push(row.lsn);
  const head = s.li.querySelector('.head');
  if (row.entry === 'event') {
    s.cause = { ...s.cause, event: row.name };
    const fields = row.data && Object.keys(row.data).length ? compact(row.data, 80) : '';
    head.prepend(
      el('span', { class: 'seq', text: `#${row.seq}` }),
      ' ',
      el('time', { datetime: row.at, title: row.at, text: clock(row.at) }),
      ' ',
      el('span', { class: 'event', text: row.name }),
      fields ? el('span', { class: 'fields', title: JSON.stringify(row.data), text: ` ${fields}` }) : '',
    );
  } else if (row.entry === 'transition') {
    s.cause = { ...s.cause, from: row.from };
    const move =
      row.from === row.to
        ? el('div', { class: 'move stays' }, 'stays ', el('code', { text: row.to }))
        : el('div', { class: 'move' }, el('code', { text: row.from }), ' → ', el('code', { text: row.to }));
    head.after(move);
  } else if (row.entry === 'intent') {
    const params = row.data && Object.keys(row.data).length ? compact(row.data) : '';
    const item = el(
      'li',
      { class: 'intent', 'data-intent': row.intentId, 'data-at': row.at },
      el('span', { class: 'kind', text: row.name }),
      params ? el('span', { class: 'params', title: JSON.stringify(row.data), text: ` ${params}` }) : '',
      ' → ',
      el('span', { class: 'outcome open', text: 'open' }),
      el(
        'div',
        { class: 'why' },
        `why: ${s.cause.event} in `,
        el('code', { text: s.cause.from }),
        ` (step #${row.seq})`,
      ),
    );
    s.intents.set(row.intentId, item);
    s.li.querySelector('.intents').append(item);
  } else {
    let item = s.intents.get(row.intentId);
    if (!item) {
      // Its step is on an older page: the outcome stands alone, naming the step that asked.
      item = el(
        'li',
        { class: 'intent' },
        el('span', { class: 'kind', text: `${row.name} (asked at step #${row.seq})` }),
        ' → ',
        el('span', { class: 'outcome' }),
      );
      s.li.querySelector('.intents').append(item);
    }
    const [text, cls] = outcomeText(row, item.dataset.at);
    const out = item.querySelector('.outcome');
    out.textContent = text;
    out.className = cls;
  }
}

function addRows(rows) {
  for (const row of rows) {
    if (seen.has(row.lsn)) continue;
    seen.add(row.lsn);
    addRow(row);
  }
  // Keep the page light: the oldest entries go, and "older steps" reads them again.
  const list = $('steps');
  while (list.children.length > MAX_STEPS) {
    const seq = Number(list.lastElementChild.dataset.seq);
    for (const lsn of steps.get(seq)?.lsns ?? []) seen.delete(lsn);
    steps.delete(seq);
    list.lastElementChild.remove();
    older = Number(list.lastElementChild.dataset.seq);
  }
  $('older').hidden = older === null;
}

async function loadOlder() {
  if (older === null) return;
  const page = await getJSON(`${api}/timeline?before=${older}`);
  older = page.older;
  addRows(page.rows);
}

async function start() {
  const { lsn, object } = await getJSON(api);
  const [chart, page] = await Promise.all([
    fetch(`/api/charts/${encodeURIComponent(object.machine)}.svg`).then((r) => (r.ok ? r.text() : null)),
    getJSON(`${api}/timeline`),
  ]);
  if (chart) mountChart(chart);
  show(object);
  older = page.older;
  addRows(page.rows);
  live(`/api/events?uid=${encodeURIComponent(uid)}`, lsn, {
    object: ({ rows, view }, event) => {
      addRows(rows);
      if (view) show(view);
      // Told once the page shows it (and again once painted): the tests and the bench listen.
      const detail = { seq: view?.seq, lsn: Number(event.lastEventId) };
      document.dispatchEvent(new CustomEvent('live:applied', { detail }));
      requestAnimationFrame(() => document.dispatchEvent(new CustomEvent('live:painted', { detail })));
    },
    gone: () => showError(new Error('this object is gone from the journal (the manager forgot it)')),
    reset: () => location.reload(),
  });
}

$('zoom').addEventListener('change', () => svg && zoom());
$('older').addEventListener('click', () => void loadOlder().catch(showError));
setInterval(() => {
  const since = $('since').dataset.since;
  if (since) $('since').textContent = `${clock(since)} (${ago(since)})`;
}, 1000);
start().catch(showError);
