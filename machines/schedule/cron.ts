/**
 * Standard five-field cron expressions, as Kubernetes CronJob reads them (robfig/cron): lists,
 * ranges, steps, month and weekday names, the @ macros, and the rule that a day matches
 * either day field when both are restricted. The parsed value is plain data (JSON-safe), so a
 * machine's context can hold it. The syntax and its rules: docs/snapshots.md.
 */

/** The five fields, in order, by the names messages use. */
export const CRON_FIELDS = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;
/** One of CRON_FIELDS. */
export type CronField = (typeof CRON_FIELDS)[number];

/** A parsed cron expression: the values each field allows, sorted. */
export interface Cron {
  /** The expression as written (a macro stays a macro). */
  readonly source: string;
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  readonly months: readonly number[];
  /** 0 is Sunday; a 7 in the expression is read as 0. */
  readonly daysOfWeek: readonly number[];
  /** Whether day-of-month is restricted (not `*`): when both day fields are, a day matches either. */
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
  /** What a user may not expect: the expression never fires, fires only in leap years, or ORs its day fields. */
  readonly warnings: readonly string[];
}

/** A schedule that is not a cron expression; the message names the field and the token at fault. */
export class CronError extends Error {
  override readonly name = 'CronError';
  readonly code = 'ERR_CRON';
  /** The field at fault; null when the expression as a whole is (field count, macro). */
  readonly field: CronField | null;
  /** The text at fault. */
  readonly token: string;

  constructor(schedule: string, field: CronField | null, token: string, problem: string) {
    const where = schedule === '' ? 'schedule' : `schedule "${schedule}":`;
    super(`${where} ${field === null ? '' : `${field} `}${problem}`);
    this.field = field;
    this.token = token;
  }
}

/**
 * A CRD `pattern` that refuses obvious garbage: a macro, or five whitespace-separated fields of
 * the characters cron uses. parseCron refuses the rest with a message naming the token.
 */
export const CRON_PATTERN =
  '^\\s*(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*,/-]+(\\s+[0-9A-Za-z*,/-]+){4})\\s*$';

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface FieldSpec {
  readonly field: CronField;
  readonly min: number;
  readonly max: number;
  /** The end of `*` and of `N/step`: day-of-week accepts 7 for Sunday but `*` stops at 6. */
  readonly last: number;
  /** Names for min, min+1...; what the field takes, for messages. */
  readonly names?: readonly string[];
  readonly takes: string;
}

const SPECS: readonly FieldSpec[] = [
  { field: 'minute', min: 0, max: 59, last: 59, takes: 'a number 0-59' },
  { field: 'hour', min: 0, max: 23, last: 23, takes: 'a number 0-23' },
  { field: 'day-of-month', min: 1, max: 31, last: 31, takes: 'a number 1-31' },
  { field: 'month', min: 1, max: 12, last: 12, names: MONTH_NAMES, takes: 'a number 1-12 or a name JAN-DEC' },
  { field: 'day-of-week', min: 0, max: 7, last: 6, names: DAY_NAMES, takes: 'a number 0-7 or a name SUN-SAT' },
];

/** Parses a five-field cron expression or a macro; throws a CronError that names the field and token. */
export function parseCron(text: string): Cron {
  const source = text.trim();
  if (source === '') throw new CronError('', null, text, 'is empty: write five fields, such as "0 3 * * *", or @daily');
  const expanded = source.startsWith('@') ? macro(source) : source;
  const parts = expanded.split(/\s+/);
  if (/^(CRON_)?TZ=/i.test(parts[0] ?? '')) {
    throw new CronError(source, null, parts[0]!, `"${parts[0]!}" names a time zone: set timeZone instead`);
  }
  if (parts.length !== 5) {
    const seconds = parts.length === 6 ? '; a seconds field is not supported' : '';
    throw new CronError(
      source,
      null,
      expanded,
      `${parts.length} fields where cron needs 5 (minute hour day-of-month month day-of-week) or a macro such as @daily${seconds}`,
    );
  }
  const fields = SPECS.map((spec, i) => parseField(source, spec, parts[i]!));
  const [minutes, hours, dom, months, dow] = fields as [Parsed, Parsed, Parsed, Parsed, Parsed];
  const cron = {
    source,
    minutes: minutes.values,
    hours: hours.values,
    daysOfMonth: dom.values,
    months: months.values,
    daysOfWeek: dow.values,
    dayOfMonthRestricted: dom.restricted,
    dayOfWeekRestricted: dow.restricted,
  };
  return { ...cron, warnings: warningsOf(cron, parts[2]!, parts[3]!, parts[4]!) };
}

function macro(source: string): string {
  const fields = MACROS[source];
  if (fields !== undefined) return fields;
  const token = source.split(/\s/)[0]!;
  if (MACROS[token] !== undefined) throw new CronError(source, null, source, `"${token}" takes no fields after it`);
  throw new CronError(source, null, token, `"${token}" is not a macro: use one of ${Object.keys(MACROS).join(', ')}`);
}

interface Parsed {
  readonly values: readonly number[];
  readonly restricted: boolean;
}

/** One field: a comma-separated list of `*`, N or N-M, each with an optional /step. */
function parseField(schedule: string, spec: FieldSpec, text: string): Parsed {
  const fail = (token: string, problem: string): never => {
    throw new CronError(schedule, spec.field, token, problem);
  };
  const values = new Set<number>();
  let restricted = true;
  for (const item of text.split(',')) {
    if (item === '') fail(text, `"${text}" has an empty list item`);
    const [range = '', stepText, extra] = item.split('/');
    if (extra !== undefined) fail(item, `"${item}" has more than one "/"`);
    let step = 1;
    if (stepText !== undefined) {
      step = /^[0-9]+$/.test(stepText) ? Number(stepText) : 0;
      if (step < 1) fail(stepText, `step "${stepText}" in "${item}" is not a whole number of 1 or more`);
    }
    let lo = spec.min;
    let hi = spec.last;
    if (range === '*') {
      if (step === 1) restricted = false;
    } else {
      if (range === '') fail(item, `"${item}" has no value before "/"`);
      const bounds = range.split('-');
      if (bounds.length > 2 || bounds.includes('')) fail(range, `"${range}" is not a value or a range N-M`);
      lo = value(spec, bounds[0]!, fail);
      hi = bounds.length === 2 ? value(spec, bounds[1]!, fail) : stepText === undefined ? lo : Math.max(lo, spec.last);
      if (lo > hi) fail(range, `range "${range}" runs backwards: wrap-around ranges are not supported, use a list`);
    }
    for (let v = lo; v <= hi; v += step) values.add(spec.field === 'day-of-week' && v === 7 ? 0 : v);
  }
  return { values: [...values].sort((a, b) => a - b), restricted };
}

/** A number or a name within the field's bounds. */
function value(spec: FieldSpec, token: string, fail: (token: string, problem: string) => never): number {
  if (token === '?') return fail(token, `"?" is not supported: use "*"`);
  if (/^[0-9]+$/.test(token)) {
    const n = Number(token);
    return n >= spec.min && n <= spec.max ? n : fail(token, `"${token}" is out of range ${spec.min}-${spec.max}`);
  }
  const named = spec.names?.indexOf(token.toUpperCase()) ?? -1;
  return named >= 0 ? spec.min + named : fail(token, `"${token}" is not ${spec.takes}`);
}

/** The most days each month has (February in a leap year). */
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function warningsOf(cron: Omit<Cron, 'warnings'>, dom: string, month: string, dow: string): string[] {
  if (cron.dayOfMonthRestricted && cron.dayOfWeekRestricted) {
    return [`day-of-month "${dom}" and day-of-week "${dow}" are both restricted, so it fires on days matching either`];
  }
  if (!cron.dayOfMonthRestricted) return [];
  const dates = cron.months.flatMap((m) =>
    cron.daysOfMonth.filter((d) => d <= DAYS_IN_MONTH[m - 1]!).map((d) => [m, d]),
  );
  if (dates.length === 0) return [`never fires: day-of-month "${dom}" does not occur in month "${month}"`];
  if (dates.every(([m, d]) => m === 2 && d === 29)) return ['fires only in leap years (on February 29)'];
  return [];
}
