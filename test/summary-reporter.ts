/**
 * Prints the ten slowest test files and when each project's files ran (where the time goes, for
 * whoever speeds the suite up next), every failed test with the first line of its error (CI shows only the tail of a run, so a red
 * run must name what failed there), and one plain closing line,
 * `vitest: N passed, N failed, N skipped`, that CI reads.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files are listed. */
const SLOWEST = 10;

/** The closing-line reporter, used beside vitest's default one. */
export default class SummaryReporter implements Reporter {
  /** When the run started, and when each file started and ended (ms since the epoch). */
  private runStart = Date.now();
  private readonly spans = new Map<TestModule, { start: number; end?: number }>();

  onTestRunStart(): void {
    this.runStart = Date.now();
  }

  onTestModuleStart(m: TestModule): void {
    this.spans.set(m, { start: Date.now() });
  }

  onTestModuleEnd(m: TestModule): void {
    const span = this.spans.get(m);
    if (span) span.end = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    const failures: string[] = [];
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const result = t.result();
        if (result.state === 'passed') count.passed++;
        else if (result.state === 'failed') {
          count.failed++;
          failures.push(`  ${m.relativeModuleId} > ${t.fullName}\n      ${firstLine(result.errors?.[0])}`);
        } else count.skipped++;
      }
      // A file that failed to load, or whose hook failed (its tests then count as skipped), has
      // no failed test but must not pass quietly.
      if (m.state() === 'failed' && ![...m.children.allTests()].some((t) => t.result().state === 'failed')) {
        count.failed++;
        failures.push(`  ${m.relativeModuleId} (the file or a hook)\n      ${firstLine(m.errors()[0])}`);
      }
    }
    count.failed += errors.length;
    for (const e of errors) failures.push(`  unhandled: ${firstLine(e)}`);
    console.log(slowest(modules));
    console.log(projectSpans(this.spans, this.runStart));
    if (failures.length > 0) console.log(`\nfailed:\n${failures.join('\n')}`);
    console.log(`\nvitest: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped`);
  }
}

/** The slowest files by the time their tests and hooks took, with their project. */
function slowest(modules: ReadonlyArray<TestModule>): string {
  const rows = modules
    .map((m) => ({ file: m.relativeModuleId, project: m.project.name, ms: m.diagnostic().duration }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, SLOWEST);
  const width = Math.max(0, ...rows.map((r) => r.file.length));
  const lines = rows.map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.file.padEnd(width)}  ${r.project}`);
  return `\nslowest files (tests and hooks):\n${lines.join('\n')}`;
}

/**
 * Each project's files from the first start to the last end, in seconds since the run started,
 * with how many files it ran and the most that ran at once: the groups one after the other, and
 * how full each kept its workers.
 */
export function projectSpans(
  spans: ReadonlyMap<{ project: { name: string } }, { start: number; end?: number }>,
  runStart: number,
): string {
  const byProject = new Map<string, { start: number; end: number }[]>();
  for (const [m, span] of spans) {
    const list = byProject.get(m.project.name) ?? [];
    list.push({ start: span.start, end: span.end ?? span.start });
    byProject.set(m.project.name, list);
  }
  const rows = [...byProject]
    .map(([project, list]) => {
      const start = Math.min(...list.map((s) => s.start));
      const end = Math.max(...list.map((s) => s.end));
      return { project, start, end, files: list.length, most: mostAtOnce(list) };
    })
    .sort((a, b) => a.start - b.start);
  const width = Math.max(0, ...rows.map((r) => r.project.length));
  const seconds = (ms: number) => ((ms - runStart) / 1000).toFixed(0).padStart(5);
  const lines = rows.map(
    (r) =>
      `  ${r.project.padEnd(width)}  ${seconds(r.start)} s -> ${seconds(r.end)} s  ${r.files} files, at most ${r.most} at once`,
  );
  return `\nprojects (from the first file's start to the last one's end):\n${lines.join('\n')}`;
}

/** The most spans open at one moment. */
function mostAtOnce(list: ReadonlyArray<{ start: number; end: number }>): number {
  const edges = list.flatMap((s) => [
    { at: s.start, step: 1 },
    { at: s.end, step: -1 },
  ]);
  // An end before a start at the same moment: a file that ends as the next starts is not two at once.
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let open = 0;
  let most = 0;
  for (const e of edges) {
    open += e.step;
    most = Math.max(most, open);
  }
  // A file that ended the moment it started still ran: one at once, at least.
  return list.length === 0 ? 0 : Math.max(1, most);
}

/** How much of an assertion's actual value a failure line carries. */
const ACTUAL_CHARS = 400;

/**
 * The first line of an error vitest recorded (a message, or whatever was thrown). Where the message
 * elides the value it asserted on (`expected [ Array(1) ] to deeply equal []`), the value follows,
 * on one line: a red run's summary says what the failed writes' errors were, not only how many.
 */
export function firstLine(error: unknown): string {
  const message =
    typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
  const line = (message.split('\n')[0] ?? '').slice(0, 300);
  const actual = typeof error === 'object' && error !== null && 'actual' in error ? error.actual : undefined;
  if (typeof actual !== 'string' || !/\b(Array|Object)\(\d+\)|\[Object\]|…/.test(line)) return line;
  return `${line}\n      actual: ${actual.replace(/\s+/g, ' ').trim().slice(0, ACTUAL_CHARS)}`;
}
