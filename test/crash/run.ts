/**
 * One run of the crash sweep, in its own namespace and journal dir: the precondition with a
 * manager without failpoint, keys written, then the action under a manager armed at one
 * failpoint; when that manager dies by SIGKILL a new one starts on the same journal, and the
 * cluster must settle and check out as if nothing had happened.
 */
import { copyFileSync, existsSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Failpoint } from '../../manager/failpoints.ts';
import type { CrashPoint } from './points.ts';
import { ClusterUnderTest, type Converged } from '../e2e/etcd-cluster.ts';
import { startManager, type ManagerProcess } from '../../localcluster/manager-process.ts';
import { createClusterSecrets } from '../e2e/tls-cluster.ts';
import { TestPki } from '../effects/etcd/test-pki.ts';
import { clientsOf, createNamespace, until } from '../effects/kubernetes/e2e-context.ts';
import { Traffic, trafficProblems, type TrafficTLS } from '../e2e/traffic.ts';
import { describeVerdict } from '../history/checker.ts';
import { CRASH_KEYS, type ActionContext, type NodeControl, type Scenario } from './scenarios.ts';

/** How a run ended. */
export type Outcome = 'converged' | 'not-reached' | 'failed';

/** One run as the results record it. */
export interface RunResult {
  readonly scenario: string;
  /** Undefined for the clean run that counts the failpoints. */
  readonly failpoint?: Failpoint;
  readonly n?: number;
  /** The window the manager was armed in, and what it is (CRASH_ALL=1). */
  readonly window?: string;
  readonly about?: string;
  readonly outcome: Outcome;
  readonly error?: string;
  /** The run's dir, relative to the sweep's, holding its journal and the managers' logs. */
  readonly dir: string;
  readonly seconds: number;
  /** The history checker's line on the traffic recorded through the run (scenarios with `history`). */
  readonly history?: string;
}

/** What a run needs. */
export interface RunOptions {
  readonly kubeconfig: string;
  readonly scenario: Scenario;
  /** Absolute dir of this run. */
  readonly dir: string;
  /** The run's dir as the results name it. */
  readonly label: string;
  readonly namespace: string;
  readonly point?: CrashPoint;
  /** Where the manager appends every failpoint it reaches (the clean run counts them); copied to `<file>.done` once the action is done. */
  readonly countFile?: string;
  readonly settleMs: number;
  /**
   * What happens to the journal between the kill and the restart: kept (the default), deleted
   * (a lost volume), or damaged (truncated to half, as a full disk can leave it).
   */
  readonly journal?: JournalFate;
  /** The local cluster's nodes, when the sweep started it (scenarios that lose a node). */
  readonly nodes?: NodeControl;
}

/** What a run does to the journal of the killed manager. */
export type JournalFate = 'keep' | 'delete' | 'damage';

/** Deletes or damages the journal in `dir` (journal.db and its -wal and -shm). */
function loseJournal(dir: string, fate: JournalFate): void {
  const db = path.join(dir, 'journal.db');
  if (fate === 'delete') for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
  if (fate === 'damage' && existsSync(db)) {
    // What the killed manager left in its WAL goes too: a bad volume loses both.
    rmSync(`${db}-wal`, { force: true });
    rmSync(`${db}-shm`, { force: true });
    truncateSync(db, Math.floor(statSync(db).size / 2));
  }
}

const KEYS = CRASH_KEYS;
const CLUSTER = 'crash';
/** After the action is done, how long an armed manager that is still alive may take to die. */
const GRACE_MS = 3000;

/** Runs the scenario once; never throws: a failure is an outcome. */
export async function runOnce(o: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const managers: { name: string; m: ManagerProcess }[] = [];
  const start = async (name: string, env: Record<string, string> = {}): Promise<ManagerProcess> => {
    const m = await startManager({ kubeconfig: o.kubeconfig, dir: o.dir, env, args: ['--namespace', o.namespace] });
    managers.push({ name, m });
    return m;
  };
  let checked: string | undefined;
  const result = (outcome: Outcome, error?: string): RunResult => ({
    scenario: o.scenario.name,
    ...(o.point ?? {}),
    outcome,
    ...(error ? { error } : {}),
    ...(checked ? { history: checked } : {}),
    dir: o.label,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  });
  const clients = clientsOf(o.kubeconfig);
  let cut = new ClusterUnderTest(clients, o.namespace, CLUSTER);
  let spec: ActionContext['spec'] = {};
  let pki: TestPki | undefined;
  let reach: TrafficTLS | undefined;
  let traffic: Traffic | undefined;
  let died: string | number | undefined;
  try {
    await createNamespace(clients.core, o.namespace);
    if (o.scenario.tls) {
      pki = await TestPki.create('etcd-operator-crash-pki-');
      const tls = await createClusterSecrets(clients, pki, o.namespace, CLUSTER);
      cut = new ClusterUnderTest(clients, o.namespace, CLUSTER, tls.reach);
      if (tls.reach.client) reach = { client: tls.reach.client, serverName: tls.reach.serverName ?? '' };
      spec = { tls: tls.spec };
    }
    let before: Converged | undefined;
    if (o.scenario.before !== undefined) {
      const setup = await start('setup');
      await cut.create({
        replicas: o.scenario.before,
        ...(o.scenario.version ? { version: o.scenario.version } : {}),
        ...(o.scenario.storage ? { storage: { ...o.scenario.storage } } : {}),
        ...(o.scenario.podTemplate ? { podTemplate: o.scenario.podTemplate } : {}),
        ...(o.scenario.options ? { options: o.scenario.options } : {}),
        ...spec,
      });
      await cut.settled(o.scenario.before, o.settleMs);
      before = await cut.verify(o.scenario.before);
      await cut.write(KEYS.prefix, KEYS.count);
      await setup.stop();
    }
    const ctx: ActionContext = {
      kubeconfig: o.kubeconfig,
      core: clients.core,
      settleMs: o.settleMs,
      before,
      spec,
      ...(pki ? { pki } : {}),
      ...(o.nodes ? { nodes: o.nodes } : {}),
      rolledBack: (r) => traffic?.rolledBack(r),
    };
    // What the user did to etcd before, with no manager running: churn, a full database.
    await o.scenario.prepare?.(cut, ctx);
    // Clients through the client Service for the whole action, the kill and the resume.
    if (o.scenario.history && before) {
      traffic = new Traffic(`crash-${o.scenario.name}`, { history: true });
      await traffic.start(clients.core, o.namespace, CLUSTER, reach);
    }

    const armed = await start(o.point ? 'armed' : 'clean', armedEnv(o.point, o.countFile));
    const restarted = restartWhenKilled(
      armed,
      (how) => (died = how),
      () => {
        loseJournal(o.dir, o.journal ?? 'keep');
        return start('restarted');
      },
    );
    await o.scenario.action(cut, ctx);
    if (died === undefined) await Promise.race([armed.exited, new Promise((r) => setTimeout(r, GRACE_MS))]);
    // An armed run counts as reached only up to here: so does the clean run count, not later.
    if (o.countFile) copyFileSync(o.countFile, `${o.countFile}.done`);
    const reached = died !== undefined;
    if (o.point && reached) {
      const next = await restarted;
      await quiet(next, o.settleMs);
      await cut.settled(o.scenario.after, o.settleMs);
    }
    const after = await cut.verify(o.scenario.after);
    if (traffic) {
      const report = await traffic.stop();
      traffic = undefined;
      checked = report.history ? describeVerdict(report.history) : 'no history recorded';
      const wrong = trafficProblems(report);
      if (wrong.length > 0) throw new Error(`the clients saw: ${wrong.join('; ')} (${checked})`);
    }
    if (before) {
      const read = await cut.readBack(KEYS.prefix, KEYS.count);
      if (read !== KEYS.count) throw new Error(`${read} of the ${KEYS.count} keys written before read back`);
    }
    o.scenario.check?.(before, after);
    return result(o.point && !reached ? 'not-reached' : 'converged');
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return result(
      'failed',
      died !== undefined && died !== 'SIGKILL' ? `the armed manager exited with ${died}; then: ${message}` : message,
    );
  } finally {
    traffic?.close();
    // The verdict is in: each manager stops as the kubelet would stop it (SIGTERM), and exits.
    for (const { m } of managers) await m.stop();
    for (const { name, m } of managers)
      writeFileSync(path.join(o.dir, `${name}.log`), m.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    await cleanUp(o.kubeconfig, o.namespace);
    pki?.remove();
  }
}

/**
 * The environment of a manager armed at `point` (none: not armed), and counting every failpoint
 * it reaches into `countFile` when given. Armed by window: the first time the failpoint is
 * reached in it, wherever that falls in the run.
 */
export function armedEnv(point?: CrashPoint, countFile?: string): Record<string, string> {
  return {
    ...(countFile ? { ETCD_OPERATOR_FAILPOINT_COUNT: countFile } : {}),
    ...(point ? { ETCD_OPERATOR_FAILPOINT: `${point.failpoint}:${point.window ? 1 : point.n}` } : {}),
    ...(point?.window ? { ETCD_OPERATOR_FAILPOINT_WINDOW: point.window } : {}),
  };
}

/**
 * The armed manager's death starts the next one (`restart`) at once, on the same journal, while
 * the action goes on; `exited` hears how it ended. Rejects when it exited other than by SIGKILL
 * (never unhandled: callers await it only when it died).
 */
export function restartWhenKilled(
  armed: ManagerProcess,
  exited: (how: number | string) => void,
  restart: () => Promise<ManagerProcess>,
): Promise<ManagerProcess> {
  const restarted = armed.exited.then(async (how) => {
    exited(how);
    if (how !== 'SIGKILL') throw new Error(`the armed manager exited with ${how}, not by its failpoint`);
    return restart();
  });
  restarted.catch(() => undefined);
  return restarted;
}

/** Waits until the manager has journaled no step for 3 s: what it resumed has run its course. */
export async function quiet(m: ManagerProcess, timeoutMs: number): Promise<void> {
  let seen = -1;
  let since = performance.now();
  await until(
    'the restarted manager quiet',
    () => {
      const steps = m.lines.filter((l) => l.msg === 'step').length;
      if (steps !== seen) [seen, since] = [steps, performance.now()];
      return Promise.resolve(performance.now() - since >= 3000 ? true : undefined);
    },
    timeoutMs,
  );
}

/** Deletes the namespace, its Pods at once; with no manager left, the EtcdMembers' and EtcdSnapshots' finalizers are taken off by hand. */
export async function cleanUp(kubeconfig: string, namespace: string): Promise<void> {
  const { core, custom } = clientsOf(kubeconfig);
  const pods = await core.listNamespacedPod({ namespace }).catch(() => ({ items: [] }));
  for (const p of pods.items)
    await core
      .deleteNamespacedPod({ name: p.metadata?.name ?? '', namespace, gracePeriodSeconds: 0 })
      .catch(() => undefined);
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  await until(
    `namespace ${namespace} gone`,
    async () => {
      for (const plural of ['etcdmembers', 'etcdsnapshots']) {
        const group = { group: 'etcd-operator.dev', version: 'v1alpha1', namespace, plural };
        const list = (await custom.listNamespacedCustomObject(group)) as {
          items: { metadata: { name: string; finalizers?: string[] } }[];
        };
        for (const m of list.items.filter((x) => x.metadata.finalizers?.length)) {
          await custom
            .patchNamespacedCustomObject({
              ...group,
              name: m.metadata.name,
              body: [{ op: 'remove', path: '/metadata/finalizers' }],
            })
            .catch(() => undefined);
        }
      }
      return core.readNamespace({ name: namespace }).then(
        () => undefined,
        (err: { code?: number }) => (err.code === 404 ? true : undefined),
      );
    },
    120_000,
  ).catch(() => undefined);
}
