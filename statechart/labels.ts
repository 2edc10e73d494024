/**
 * The text on the chart, as Graphviz HTML-like labels: a state's name, its step and the
 * message `describe` shows (once, on the outermost state all of whose states share it),
 * its tags and entry intents; a transition's event, guard, intents and overlay counts.
 */
import type { Chart, ChartEdge, ChartState } from './model.ts';
import type { EdgeUse, Overlay } from './overlay.ts';

const WRAP = 34;

/** Escapes text for an HTML-like label. */
export const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Word-wraps text to lines of about `width` characters. */
export function wrap(text: string, width = WRAP): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

const small = (text: string, colour = '#374151'): string =>
  `<FONT POINT-SIZE="9" COLOR="${colour}">${wrap(text).map(esc).join('<BR ALIGN="LEFT"/>')}<BR ALIGN="LEFT"/></FONT>`;

/** Which states show a step and a message: where they first differ from the enclosing state's. */
export class StateText {
  readonly #byId: Map<string, ChartState>;
  readonly #messages = new Map<string, Set<string>>();

  constructor(chart: Chart) {
    this.#byId = new Map(chart.states.map((s) => [s.id, s]));
    // Every state collects the messages of the atomic states inside it.
    for (const s of chart.states) {
      if (s.kind === 'compound' || s.kind === 'parallel') continue;
      for (let at: ChartState | undefined = s; at; at = this.#parent(at)) {
        const set = this.#messages.get(at.id) ?? new Set<string>();
        set.add(s.message);
        this.#messages.set(at.id, set);
      }
    }
  }

  /** The one message of every atomic state inside `s`, unless its parent already shows it. */
  message(s: ChartState): string | null {
    const mine = this.#one(s);
    const parent = this.#parent(s);
    return mine !== null && (parent === undefined || this.#one(parent) !== mine) ? mine : null;
  }

  /** The step, on top-level states and where it changes (member `catchingUp` reads Promoting). */
  step(s: ChartState): string | null {
    const parent = this.#parent(s);
    return parent === undefined || parent.step !== s.step ? s.step : null;
  }

  /** Body lines shared by state boxes and cluster titles. */
  body(s: ChartState): string {
    const parts: string[] = [];
    const step = this.step(s);
    const message = this.message(s);
    if (step) parts.push(`<FONT POINT-SIZE="10" COLOR="#1e3a8a">Step: ${esc(step)}</FONT><BR ALIGN="LEFT"/>`);
    if (s.tags.length)
      parts.push(`<FONT POINT-SIZE="9" COLOR="#92400e">tags: ${esc(s.tags.join(', '))}</FONT><BR ALIGN="LEFT"/>`);
    if (message) parts.push(small(message));
    if (s.intents.length)
      parts.push(
        `<FONT POINT-SIZE="10" COLOR="#7c2d12">entry / <B>${esc(s.intents.join(', '))}</B></FONT><BR ALIGN="LEFT"/>`,
      );
    return parts.join('');
  }

  #one(s: ChartState): string | null {
    const set = this.#messages.get(s.id);
    return set && set.size === 1 ? ([...set][0] ?? null) : null;
  }

  #parent(s: ChartState): ChartState | undefined {
    return s.parent === null ? undefined : this.#byId.get(s.parent);
  }
}

/** An atomic state's box: its name, then the body; in an overlay, how often it stayed put. */
export function stateLabel(s: ChartState, text: StateText, overlay?: Overlay): string {
  const stays = overlay?.stays.get(s.id);
  const here = overlay?.current === s.id ? overlay.now : undefined;
  const extra = [
    stays
      ? `<FONT POINT-SIZE="9" COLOR="#c2410c">${stays} event(s) here changed no state</FONT><BR ALIGN="LEFT"/>`
      : '',
    here ? `<B>NOW</B> (step #${overlay?.lastSeq ?? '?'}): ${small(`${here.step}: ${here.message}`, '#9a3412')}` : '',
    here && overlay?.problem ? small(overlay.problem, '#b91c1c') : '',
  ].join('');
  return `<B>${esc(s.key)}</B><BR ALIGN="LEFT"/>${text.body(s)}${extra}`;
}

/** A compound state's title. */
export function clusterLabel(s: ChartState, text: StateText): string {
  return `<B>${esc(s.key)}</B><BR ALIGN="LEFT"/>${text.body(s)}`;
}

/** `event [guard] / intents` per transition, one per line, and the overlay's count and order. */
export function edgeLabel(edges: readonly ChartEdge[], use?: EdgeUse): string {
  const lines = edges.map((e) => {
    const event = e.event === '' ? '' : esc(e.event);
    const guard = e.guard ? ` [${esc(e.guard)}]` : '';
    const intents = e.intents.length ? ` / <B>${esc(e.intents.join(', '))}</B>` : '';
    const updates = e.targets.length === 0 && e.updates.length ? ` / ${esc(e.updates.join(', '))}` : '';
    return `${event}${guard}${intents}${updates}`.trim() || 'always';
  });
  if (use) {
    const order = use.order.length ? ` #${use.order.join(' #')}` : '';
    lines.push(`<B>x${use.count}${esc(order)}</B>`);
  }
  return lines.join('<BR/>');
}

/** The chart's title, and the overlay's object and legend of numbers. */
export function rootLabel(chart: Chart, overlay?: Overlay): string {
  const title = `<B>${esc(chart.machine)} machine</B>`;
  if (!overlay)
    return `${title}<BR/><FONT POINT-SIZE="10">every state and transition, read from the machine's definition</FONT>`;
  return `${title}: <B>${esc(overlay.object)}</B><BR/><FONT POINT-SIZE="10">${esc(
    `${overlay.steps} journaled step(s); path taken in orange (xN: times taken), the last ${overlay.numbered} numbered #1 (oldest) to #${overlay.numbered}; purple dashed: what the current state waits for`,
  )}</FONT>`;
}
