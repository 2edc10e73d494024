/** Prints one plain closing line, `vitest: N passed, N failed, N skipped`, that CI reads. */
import type { Reporter, TestModule } from 'vitest/node';

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
      // A file that failed to load has no tests but must not pass quietly.
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) count.failed++;
    }
    count.failed += errors.length;
    console.log(`\nvitest: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped`);
  }
}
