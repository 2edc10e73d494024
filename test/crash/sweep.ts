/**
 * `make e2e-crash`: the crash sweep. For each scenario a clean run counts how often each
 * failpoint is reached, and in which window (the kind of step: manager/failpoints.ts); then,
 * for each point chosen, a run kills the manager there, restarts it on the same journal and
 * checks that the cluster converges as if nothing happened.
 *
 *   node test/crash/sweep.ts [--scenario NAME] [--all | --every-n | --per-failpoint K]
 *
 * Env, the same: CRASH_SCENARIO=NAME[,NAME...], CRASH_ALL=1 (every window: one run per distinct window of
 * each failpoint), CRASH_ALL=every-n (every (failpoint, n) reached: hours), CRASH_PER_FAILPOINT=K
 * (default 3: first, middle and last n of each failpoint), CRASH_SETTLE_SECONDS (default 180),
 * CRASH_BUDGET_MINUTES (start no run after that; default none; 0: the clean runs only),
 * CRASH_PARALLEL=K (K runs at once on the one cluster, each in its own namespace; default 1),
 * CRASH_JOURNAL=keep|delete|damage (what happens to the
 * killed manager's journal before the restart: kept, deleted, or truncated to half; default keep),
 * CRASH_POINTS=failpoint:n|failpoint@window,... (run just these points of each scenario, without
 * the counting run), CRASH_COUNTS=FILE (one scenario: choose from the count file of an earlier
 * clean run, its `reached.txt.done`, without a new one), CRASH_FROM=K (skip the first K points
 * chosen: those an earlier sweep cut by its budget ran; with CRASH_COUNTS, the same points),
 * LOCALCLUSTER_KUBECONFIG (use a running local cluster instead of starting one).
 * Results: test/crash/results/latest.json; each run's journal and logs under results/runs/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FAILPOINTS } from '../../manager/failpoints.ts';
import { choosePoints, chooseWindows, countReached, countWindows, readReached, type CrashPoint } from './points.ts';
import { runOnce, type JournalFate, type RunResult } from './run.ts';
import { runCluster } from './local-cluster.ts';
import { SCENARIOS, type Scenario } from './scenarios.ts';

const { values: flags } = parseArgs({
  options: {
    scenario: { type: 'string' },
    all: { type: 'boolean' },
    'every-n': { type: 'boolean' },
    'per-failpoint': { type: 'string' },
  },
});
const only = flags.scenario ?? process.env.CRASH_SCENARIO;
/** Every window, every n, or at most K n per failpoint. */
const per: number | 'windows' =
  flags['every-n'] || process.env.CRASH_ALL === 'every-n'
    ? Infinity
    : flags.all || process.env.CRASH_ALL === '1'
      ? 'windows'
      : Number(flags['per-failpoint'] ?? process.env.CRASH_PER_FAILPOINT ?? 3);
const parallel = Number(process.env.CRASH_PARALLEL ?? 1);
const settleMs = Number(process.env.CRASH_SETTLE_SECONDS ?? 180) * 1000;
const journal = (process.env.CRASH_JOURNAL ?? 'keep') as JournalFate;
if (!['keep', 'delete', 'damage'].includes(journal)) {
  console.error(`CRASH_JOURNAL must be keep, delete or damage, not ${journal}`);
  process.exit(2);
}
const budgetMs = Number(process.env.CRASH_BUDGET_MINUTES ?? Infinity) * 60_000;
// Given points (a window found in a clean run's log, such as a learner added and not yet answered).
const given = (process.env.CRASH_POINTS ?? '')
  .split(',')
  .filter(Boolean)
  .map((p): CrashPoint => {
    // failpoint:n, or failpoint@window: the first time in that window.
    const [failpoint = '', n = '', window] = p.includes('@') ? [p.split('@')[0], '1', p.split('@')[1]] : p.split(':');
    if (!FAILPOINTS.includes(failpoint as never) || !(Number(n) >= 1) || window === '') {
      console.error(`CRASH_POINTS: ${p} is not failpoint:n or failpoint@window (failpoints: ${FAILPOINTS.join(', ')})`);
      process.exit(2);
    }
    return { failpoint: failpoint as CrashPoint['failpoint'], n: Number(n), ...(window ? { window } : {}) };
  });
const counts = process.env.CRASH_COUNTS;
const from = Number(process.env.CRASH_FROM ?? 0);
const scenarios = SCENARIOS.filter((s) => !only || only.split(',').includes(s.name));
if (counts && (scenarios.length !== 1 || !existsSync(counts))) {
  console.error(`CRASH_COUNTS: name one scenario (CRASH_SCENARIO) and a count file that exists, not ${counts}`);
  process.exit(2);
}
if (scenarios.length === 0 || !(per === 'windows' || per >= 1) || !(parallel >= 1)) {
  console.error(
    `usage: sweep.ts [--scenario ${SCENARIOS.map((s) => s.name).join('|')}] [--all | --every-n | --per-failpoint K>=1]; CRASH_PARALLEL=K>=1`,
  );
  process.exit(2);
}

const resultsDir = path.join(import.meta.dirname, 'results');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const runsDir = path.join(resultsDir, 'runs', stamp);
mkdirSync(runsDir, { recursive: true });
// Durations by the monotonic clock: the wall clock of a VM may jump.
const started = performance.now();
// Each run starts the manager from the working tree: name what was measured.
const git = (...args: string[]): string =>
  spawnSync('git', args, { cwd: import.meta.dirname, encoding: 'utf8' }).stdout?.trim() ?? '';
const measured = {
  commit: git('rev-parse', 'HEAD'),
  changedAtStart: git(
    'status',
    '--porcelain',
    '--',
    '../../manager',
    '../../machines',
    '../../effects',
    '../../journal',
  )
    .split('\n')
    .filter(Boolean),
};

const cluster = await runCluster('etcd-operator-crash-');
const { kubeconfig, nodes } = cluster;
console.log(
  `crash sweep: ${scenarios.map((s) => s.name).join(', ')}; ${per === 'windows' ? 'every window' : per === Infinity ? 'every n' : `at most ${per} n per failpoint`}${parallel > 1 ? `, ${parallel} runs at once` : ''}; runs in ${path.relative(process.cwd(), runsDir)}`,
);

const runs: RunResult[] = [];
let seq = 0;
const run = async (scenario: Scenario, label: string, point?: CrashPoint, countFile?: string): Promise<RunResult> => {
  const dir = path.join(runsDir, scenario.name, label);
  mkdirSync(dir, { recursive: true });
  if (point?.about) writeFileSync(path.join(dir, 'window.txt'), `${point.window ?? ''}\t${point.about}\n`);
  const r = await runOnce({
    kubeconfig,
    scenario,
    dir,
    label: path.relative(resultsDir, dir),
    namespace: `crash-${process.pid}-${++seq}`,
    point,
    countFile,
    settleMs,
    journal,
    ...(nodes ? { nodes } : {}),
  });
  console.log(
    `${scenario.name.padEnd(12)} ${(point ? `${point.failpoint}:${point.n}${point.window ? `@${point.window}` : ''}` : 'clean').padEnd(33)} ${r.outcome.padEnd(11)} ${r.seconds.toFixed(1).padStart(6)} s${point?.about ? `  ${point.about}` : ''}${r.error ? `  ${r.error.slice(0, 400)}` : ''}${r.history && !r.error ? `  history: ${r.history}` : ''}`,
  );
  return r;
};

type Summary = {
  reached: Record<string, number>;
  reachedPairs: number;
  /** Distinct windows each failpoint was reached in, and their sum. */
  windows: Record<string, number>;
  windowCount: number;
  chosen: number;
  swept: number;
  converged: number;
  notReached: number;
  failed: number;
  cleanSeconds: number;
};
const summary: Record<string, Summary> = {};
const resultsFile = path.join(resultsDir, 'latest.json');
const tally = () => {
  const swept = runs.filter((r) => r.failpoint);
  return {
    swept,
    converged: swept.filter((r) => r.outcome === 'converged').length,
    notReached: swept.filter((r) => r.outcome === 'not-reached').length,
    cleanFailed: runs.some((r) => !r.failpoint),
  };
};
/** Written after every run, so a sweep cut short still tells what it found. */
const save = (complete: boolean): void => {
  const report = {
    complete,
    ...measured,
    updatedAt: new Date().toISOString(),
    wallSeconds: Math.round((performance.now() - started) / 1000),
    perFailpoint: per === 'windows' ? 'every window' : per === Infinity ? 'all' : per,
    parallel,
    settleSeconds: settleMs / 1000,
    journal,
    budgetMinutes: budgetMs / 60_000,
    from,
    summary,
    runs,
  };
  writeFileSync(resultsFile, JSON.stringify(report, null, 2) + '\n');
  // Kept with the runs too: the next sweep (a next chunk) writes over latest.json.
  writeFileSync(path.join(runsDir, 'results.json'), JSON.stringify(report, null, 2) + '\n');
};

try {
  // First every scenario's clean run, then the points taken in turn from each scenario, so
  // that a sweep stopped by its budget has crashed every scenario as evenly as it could.
  const queue: { scenario: Scenario; point: CrashPoint; i: number }[] = [];
  for (const scenario of scenarios) {
    const countFile = path.join(runsDir, scenario.name, 'clean', 'reached.txt');
    mkdirSync(path.dirname(countFile), { recursive: true });
    writeFileSync(countFile, '');
    // Points or counts given: no counting run.
    const clean = given.length > 0 || counts ? undefined : await run(scenario, 'clean', undefined, countFile);
    const done = counts ?? `${countFile}.done`;
    const text = existsSync(done) ? readFileSync(done, 'utf8') : '';
    const reached = countReached(text);
    const windows = countWindows(readReached(text));
    const chosen = per === 'windows' ? chooseWindows(readReached(text)) : choosePoints(reached, per);
    const points = given.length > 0 ? given : !clean || clean.outcome === 'converged' ? chosen : [];
    summary[scenario.name] = {
      reached,
      reachedPairs: Object.values(reached).reduce((a, b) => a + b, 0),
      windows,
      windowCount: Object.values(windows).reduce((a, b) => a + b, 0),
      chosen: points.length,
      swept: 0,
      converged: 0,
      notReached: 0,
      failed: 0,
      cleanSeconds: clean?.seconds ?? 0,
    };
    if (clean && clean.outcome !== 'converged') {
      console.log(`${scenario.name}: the clean run failed, so no failpoint is swept: ${clean.error}`);
      runs.push(clean);
    } else
      console.log(
        `${scenario.name}: reached ${JSON.stringify(reached)}: ${summary[scenario.name]!.reachedPairs} pairs in ${summary[scenario.name]!.windowCount} windows ${JSON.stringify(windows)}, ${points.length} chosen`,
      );
    queue.push(
      ...points.map((point) => ({
        scenario,
        point,
        i: points.filter((p) => p.failpoint === point.failpoint && p.n < point.n).length,
      })),
    );
    save(false);
  }
  // i: the point's place among its failpoint's n; so: every scenario's first n of every failpoint, then the next...
  queue.sort(
    (a, b) =>
      a.i - b.i ||
      FAILPOINTS.indexOf(a.point.failpoint) - FAILPOINTS.indexOf(b.point.failpoint) ||
      scenarios.indexOf(a.scenario) - scenarios.indexOf(b.scenario),
  );
  if (from > 0) console.log(`skipping the first ${queue.splice(0, from).length} points chosen (CRASH_FROM)`);
  // K workers take the queue in turn; a scenario that stops nodes runs alone.
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      if (performance.now() - started > budgetMs) return;
      const { scenario, point } = next;
      const r = await run(scenario, `${point.failpoint}-${point.n}${point.window ? `-${point.window}` : ''}`, point);
      runs.push(r);
      const s = summary[scenario.name]!;
      s.swept += 1;
      if (r.outcome === 'converged') s.converged += 1;
      else if (r.outcome === 'not-reached') s.notReached += 1;
      else s.failed += 1;
      save(false);
    }
  };
  const alone = scenarios.some((s) => s.stopsNodes);
  await Promise.all(Array.from({ length: alone ? 1 : parallel }, worker));
} finally {
  await cluster.stop();
}

save(true);
const { swept, converged, notReached, cleanFailed } = tally();
for (const [name, s] of Object.entries(summary)) {
  console.log(
    `${name}: reached ${s.reachedPairs} in ${s.windowCount} windows, chosen ${s.chosen}, swept ${s.swept}, converged ${s.converged}, not reached ${s.notReached}, failed ${s.failed}`,
  );
}
const unswept = Object.values(summary).reduce((a, s) => a + s.chosen - s.swept, 0) - from;
if (unswept > 0) console.log(`${unswept} chosen points not run: the budget of ${budgetMs / 60_000} min ran out`);
if (cleanFailed)
  console.log(
    `a clean run failed: ${runs
      .filter((r) => !r.failpoint)
      .map((r) => r.scenario)
      .join(', ')} not swept`,
  );
console.log(
  `wall time ${Math.round((performance.now() - started) / 1000)} s; ${notReached} not reached (counted as not converged); results in ${path.relative(process.cwd(), resultsFile)}`,
);
console.log(`crash sweep: ${converged} of ${swept.length} failpoints converged`);
process.exit(converged === swept.length && swept.length > 0 && !cleanFailed ? 0 : 1);
