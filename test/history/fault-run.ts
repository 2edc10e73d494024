/**
 * `make e2e-history`: the seeded fault run. One 3-member cluster with client and peer TLS, made
 * at etcd 3.5, goes through a sequence of operator actions chosen and ordered from a seed
 * (fault-plan.ts): scale 3 -> 5 -> 3, a member's volume wiped, the node of a member stopped and
 * started again, the rolls 3.5 -> 3.6 -> 3.7 and one minor down, a CA change, a defragmentation,
 * a rollback in place to a snapshot taken under the traffic (its history checked as two epochs);
 * in a few of them the manager is killed (SIGKILL) at a sampled failpoint and a new one resumes
 * its journal. Each action is a crash-sweep scenario's (test/crash/scenarios.ts), and each runs
 * under recorded traffic (test/e2e/traffic.ts with `history`) that the history checker must find
 * linearizable with whole watches: zero violations, or the run fails.
 *
 *   node test/history/fault-run.ts
 *
 * Env: HISTORY_SEED (the plan's seed, printed at the start; default random), HISTORY_ROUNDS (rounds
 * of the actions; default 3), HISTORY_KILLS (actions of each round the manager is killed in;
 * default 3), HISTORY_SETTLE_SECONDS (how long each wait for the operator
 * may take; default 300), HISTORY_BUDGET_MINUTES (start no action after that many minutes of the
 * run; default none: the plan's later actions are then reported as not run), LOCALCLUSTER_KUBECONFIG (a running local cluster: no node loss then),
 * LOCALCLUSTER_KEEP=1. The journal and the managers' logs are kept in a temp dir when the run fails.
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startManager, type ManagerProcess } from '../../localcluster/manager-process.ts';
import { ETCD_IMAGE_VERSIONS } from '../../localcluster/realnode/images.ts';
import { runCluster } from '../crash/local-cluster.ts';
import { armedEnv, cleanUp, quiet, restartWhenKilled } from '../crash/run.ts';
import { SCENARIOS, type ActionContext, type Scenario } from '../crash/scenarios.ts';
import { ClusterUnderTest } from '../e2e/etcd-cluster.ts';
import { createClusterSecrets } from '../e2e/tls-cluster.ts';
import { Traffic, trafficProblems, type TrafficTLS } from '../e2e/traffic.ts';
import { TestPki } from '../effects/etcd/test-pki.ts';
import { clientsOf, createNamespace } from '../effects/kubernetes/e2e-context.ts';
import { describeVerdict } from './checker.ts';
import { FIRST_VERSION, planFaultRun, type PlannedAction } from './fault-plan.ts';

/** What one action did and what its clients saw. */
interface ActionResult {
  readonly scenario: string;
  /** `failpoint:n` the manager was armed at, and whether it died there. */
  readonly kill?: string;
  readonly killed: boolean;
  readonly operations: number;
  readonly watchEvents: number;
  readonly violations: readonly string[];
  /** Writes of the plain writer beside the recorder that failed within their 10 s budget. */
  readonly failedWrites: number;
  readonly seconds: number;
  readonly verdict: string;
}

const seed = process.env.HISTORY_SEED ? Number(process.env.HISTORY_SEED) : randomInt(2 ** 31);
const rounds = Number(process.env.HISTORY_ROUNDS ?? 3);
const kills = Number(process.env.HISTORY_KILLS ?? 3);
const settleMs = Number(process.env.HISTORY_SETTLE_SECONDS ?? 300) * 1000;
const budgetMs = Number(process.env.HISTORY_BUDGET_MINUTES ?? Infinity) * 60_000;
if (!Number.isSafeInteger(seed) || !(rounds >= 1) || !(kills >= 0)) {
  console.error('HISTORY_SEED must be an integer, HISTORY_ROUNDS and HISTORY_KILLS counts');
  process.exit(2);
}
const CLUSTER = 'history';
const KEYS = { prefix: 'before-history', count: 20 };
const scenarioNamed = (name: string): Scenario => {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new Error(`no crash-sweep scenario ${name}`);
  return s;
};

const started = performance.now();
const secondsSince = (t: number): number => Math.round((performance.now() - t) / 100) / 10;
console.log(`seeded fault run: HISTORY_SEED=${seed}`);
const cluster = await runCluster('etcd-operator-history-');
let plan = planFaultRun(seed, { versions: ETCD_IMAGE_VERSIONS, rounds, kills });
if (!cluster.nodes) plan = plan.filter((a) => a.scenario !== 'node-loss');
const describeAction = (a: PlannedAction): string =>
  a.kill ? `${a.scenario} (kill at ${a.kill.failpoint}:${a.kill.n})` : a.scenario;
for (let r = 1; r <= rounds; r++)
  console.log(
    `plan, round ${r}: ${plan
      .filter((a) => a.round === r)
      .map(describeAction)
      .join(' -> ')}`,
  );

const dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-operator-history-run-'));
const namespace = `history-${process.pid}`;
const clients = clientsOf(cluster.kubeconfig);
const managers: { name: string; m: ManagerProcess }[] = [];
const start = async (name: string, env: Record<string, string> = {}): Promise<ManagerProcess> => {
  const m = await startManager({ kubeconfig: cluster.kubeconfig, dir, env, args: ['--namespace', namespace] });
  managers.push({ name, m });
  return m;
};
let manager: ManagerProcess | undefined;
let pki: TestPki | undefined;
let traffic: Traffic | undefined;
const results: ActionResult[] = [];
let failure: string | undefined;
let current = 'the set-up';

/**
 * Runs one action under recorded traffic: the traffic starts, the manager is armed (when the
 * plan kills it here), the action runs until the operator says it is done, a killed manager's
 * successor settles, etcd is checked against the scenario, and the history is checked.
 */
async function runAction(i: number, a: PlannedAction, cut: ClusterUnderTest, ctx: ActionContext, reach: TrafficTLS) {
  const scenario = scenarioNamed(a.scenario);
  const began = performance.now();
  const before = await cut.verify(scenario.before ?? 3);
  const actx: ActionContext = { ...ctx, before, rolledBack: (r) => traffic?.rolledBack(r) };
  await scenario.prepare?.(cut, actx);
  // The fault run is the history's own search: its clients at the busier pace it was measured at.
  traffic = new Traffic(`h${i}-${scenario.name}`, { history: true, seed: seed + i, pauseMs: 25 });
  await traffic.start(clients.core, namespace, CLUSTER, reach);
  let died: number | string | undefined;
  let restarted: Promise<ManagerProcess> | undefined;
  if (a.kill) {
    await manager?.stop();
    const armed = await start(`armed-${i}-${scenario.name}`, armedEnv(a.kill));
    manager = armed;
    restarted = restartWhenKilled(
      armed,
      (how) => (died = how),
      () => start(`restarted-${i}-${scenario.name}`),
    );
  }
  await scenario.action(cut, actx);
  // As the sweep does: a manager armed near the action's end gets a moment to reach its failpoint.
  if (a.kill && died === undefined) await Promise.race([manager?.exited, new Promise((r) => setTimeout(r, 3000))]);
  const killed = died === 'SIGKILL';
  if (killed && restarted) {
    manager = await restarted;
    await quiet(manager, settleMs);
    await cut.settled(scenario.after, settleMs);
  } else if (a.kill) {
    // Not reached: the next action starts with a manager that is not armed.
    await manager?.stop();
    manager = await start(`manager-${i}`);
  }
  const after = await cut.verify(scenario.after);
  scenario.check?.(before, after);
  const report = await traffic.stop();
  traffic = undefined;
  const v = report.history;
  const result: ActionResult = {
    scenario: scenario.name,
    ...(a.kill ? { kill: `${a.kill.failpoint}:${a.kill.n}` } : {}),
    killed,
    operations: v?.checked ?? 0,
    watchEvents: v?.watch.events ?? 0,
    violations: v ? trafficProblems(report) : ['no history recorded'],
    failedWrites: report.failed.length,
    seconds: secondsSince(began),
    verdict: v ? describeVerdict(v) : 'no history recorded',
  };
  const killNote = a.kill
    ? `manager ${killed ? 'killed' : 'not killed (failpoint not reached)'} at ${result.kill}; `
    : '';
  console.log(
    `${String(i + 1).padStart(2)}/${plan.length} round ${a.round} ${scenario.name.padEnd(14)} ${result.seconds.toFixed(1).padStart(6)} s  ` +
      `${result.operations} operations and ${result.watchEvents} watch events checked, ${result.violations.length} violations; ` +
      `${killNote}${result.failedWrites} plain writes failed\n        ${result.verdict}`,
  );
  return result;
}

try {
  await createNamespace(clients.core, namespace);
  pki = await TestPki.create('etcd-operator-history-pki-');
  const tls = await createClusterSecrets(clients, pki, namespace, CLUSTER);
  const cut = new ClusterUnderTest(clients, namespace, CLUSTER, tls.reach);
  const reach: TrafficTLS = { client: tls.reach.client!, serverName: tls.reach.serverName ?? '' };
  manager = await start('manager');
  // What the actions' scenarios make their clusters with: a short toleration of a lost node,
  // room for the defragmentation's churn.
  await cut.create({
    replicas: 3,
    version: FIRST_VERSION,
    storage: { ...scenarioNamed('defrag').storage! },
    podTemplate: scenarioNamed('node-loss').podTemplate!,
    tls: tls.spec,
  });
  await cut.settled(3, settleMs);
  await cut.write(KEYS.prefix, KEYS.count);
  console.log(`cluster of 3 at ${FIRST_VERSION} with TLS ready at ${secondsSince(started)} s`);
  const ctx: ActionContext = {
    kubeconfig: cluster.kubeconfig,
    core: clients.core,
    settleMs,
    spec: { tls: tls.spec },
    pki,
    ...(cluster.nodes ? { nodes: cluster.nodes } : {}),
  };
  for (const [i, a] of plan.entries()) {
    if (performance.now() - started > budgetMs) {
      console.log(`the budget of ${budgetMs / 60_000} min ran out: ${plan.length - i} actions not run`);
      break;
    }
    current = a.scenario;
    const r = await runAction(i, a, cut, ctx, reach);
    results.push(r);
    if (r.violations.length > 0) throw new Error(`${r.scenario}: the clients saw: ${r.violations.join('; ')}`);
  }
  current = 'the read-back';
  const read = await cut.readBack(KEYS.prefix, KEYS.count);
  if (read !== KEYS.count) throw new Error(`${read} of the ${KEYS.count} keys written at the start read back`);
} catch (err) {
  failure = `${current}: ${err instanceof Error ? err.message : String(err)}`;
} finally {
  traffic?.close();
  for (const { m } of managers) await m.stop();
  for (const { name, m } of managers)
    writeFileSync(path.join(dir, `${name}.log`), m.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  await cleanUp(cluster.kubeconfig, namespace);
  pki?.remove();
  await cluster.stop();
}

const sum = (f: (r: ActionResult) => number, of = results): number => of.reduce((a, r) => a + f(r), 0);
const violations = sum((r) => r.violations.length);
for (const name of new Set(results.map((r) => r.scenario))) {
  const of = results.filter((r) => r.scenario === name);
  console.log(
    `${name.padEnd(14)} ${of.length} runs, ${sum((r) => r.operations, of)} operations and ` +
      `${sum((r) => r.watchEvents, of)} watch events checked, ${sum((r) => r.violations.length, of)} violations, ` +
      `manager killed in ${of.filter((r) => r.killed).length}, ${sum((r) => r.seconds, of).toFixed(1)} s`,
  );
}
console.log(
  `total: ${results.length} of ${plan.length} actions, ${sum((r) => r.operations)} operations and ` +
    `${sum((r) => r.watchEvents)} watch events checked, ${violations} violations; manager killed in ` +
    `${results.filter((r) => r.killed).length} of ${results.filter((r) => r.kill).length} armed; ` +
    `${sum((r) => r.seconds).toFixed(1)} s in actions, wall time ${secondsSince(started).toFixed(1)} s; HISTORY_SEED=${seed}`,
);
if (failure) {
  console.log(`seeded fault run FAILED at ${failure}; journal and manager logs kept in ${dir}`);
  process.exit(1);
}
rmSync(dir, { recursive: true, force: true });
console.log('seeded fault run: passed');
process.exit(0);
