/**
 * Prints the ten slowest test files (where the time goes, for whoever speeds the suite up next),
 * every failed test with the first line of its error (CI shows only the tail of a run, so a red
 * run must name what failed there), and one plain closing line,
 * `vitest: N passed, N failed, N skipped`, that CI reads.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files are listed. */
const SLOWEST = 10;

/** The closing-line reporter, used beside vitest's default one. */
export default class SummaryReporter implements Reporter {
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

/** The first line of an error vitest recorded (a message, or whatever was thrown). */
function firstLine(error: unknown): string {
  const message =
    typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
  return (message.split('\n')[0] ?? '').slice(0, 300);
}
