/**
 * Prints the ten slowest test files (where the time goes, for whoever speeds the suite up next)
 * and one plain closing line, `vitest: N passed, N failed, N skipped`, that CI reads.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files are listed. */
const SLOWEST = 10;

/** The closing-line reporter, used beside vitest's default one. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') count.passed++;
        else if (state === 'failed') count.failed++;
        else count.skipped++;
      }
      // A file that failed to load, or whose hook failed (its tests then count as skipped), has
      // no failed test but must not pass quietly.
      if (m.state() === 'failed' && ![...m.children.allTests()].some((t) => t.result().state === 'failed'))
        count.failed++;
    }
    count.failed += errors.length;
    console.log(slowest(modules));
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
