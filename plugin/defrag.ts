/**
 * `kubectl etcd defrag NAME`: the API has no "defragment now" field; what it has is
 * spec.maintenance.defrag.schedule, which the operator reads from when it sees it. So the
 * command sets the schedule to every minute, waits for the run it starts (Progressing
 * Defragmenting), puts the schedule back as it was (a spec edit during a run waits for the run),
 * and waits for the run's Defragmented condition. The operator does the work, one member at a
 * time, the leader last; this command never calls etcd.
 */
import type { Condition, EtcdCluster } from '../api/v1alpha1/index.ts';
import type { Command } from './args.ts';
import { KubeClient } from './api.ts';
import { printObject } from './print.ts';
import { waitFor, type PluginIO } from './wait.ts';

type DefragCommand = Extract<Command, { command: 'defrag' }>;

/** The schedule that asks for a run at the next minute. */
export const EVERY_MINUTE = '* * * * *';

const cond = (c: EtcdCluster, type: string): Condition | undefined =>
  c.status?.conditions?.find((x) => x.type === type);

/** The merge patch that asks for a run. */
export const askPatch = () => ({ spec: { maintenance: { defrag: { schedule: EVERY_MINUTE } } } });

/** The merge patch that puts spec.maintenance back as `before` had it. */
export function restorePatch(before: EtcdCluster): object {
  const maintenance = before.spec.maintenance;
  if (!maintenance) return { spec: { maintenance: null } };
  if (!maintenance.defrag) return { spec: { maintenance: { defrag: null } } };
  return { spec: { maintenance: { defrag: { schedule: maintenance.defrag.schedule ?? null } } } };
}

/** Where a run asked for stands: not started, running, or finished with Defragmented's word. */
export function defragLook(
  c: EtcdCluster,
  before: Condition | undefined,
): { done: Condition } | { progress: string; running: boolean } {
  const progressing = cond(c, 'Progressing');
  const running = progressing?.status === 'True' && progressing.reason === 'Defragmenting';
  const now = cond(c, 'Defragmented');
  const changed = now !== undefined && (now.message !== before?.message || now.status !== before?.status);
  if (!running && changed) return { done: now };
  if (running) return { progress: `Defragmenting: ${progressing.message}`, running };
  const step =
    progressing?.status === 'True' ? `; the cluster is busy: ${progressing.reason} (${progressing.message})` : '';
  return {
    progress: `asked for a run at the next minute (spec.maintenance.defrag.schedule '${EVERY_MINUTE}')${step}`,
    running,
  };
}

/** Runs the command; resolves to the exit code. */
export async function runDefrag(k: KubeClient, c: DefragCommand, io: PluginIO, signal?: AbortSignal): Promise<number> {
  const ns = c.namespace ?? k.defaultNamespace;
  const path = KubeClient.path('EtcdCluster', ns, c.name);
  const before = await k.get<EtcdCluster>(path);
  const defragmented = cond(before, 'Defragmented');
  await k.mergePatch(path, askPatch());
  io.stderr(
    `etcdcluster.etcd-operator.dev/${c.name}: asked the operator for a defragmentation run (spec.maintenance.defrag.schedule '${EVERY_MINUTE}' until it starts)\n`,
  );
  let restored = false;
  const putBack = async (): Promise<void> => {
    if (restored) return;
    restored = true;
    await k.mergePatch(path, restorePatch(before));
  };
  try {
    if (!c.wait) {
      io.stderr(
        `not waiting: put spec.maintenance back once the run starts (kubectl etcd defrag waits and does it), or it runs every minute\n`,
      );
      restored = true;
      return 0;
    }
    const done = await waitFor(
      io,
      async () => {
        const now = await k.get<EtcdCluster>(path);
        const look = defragLook(now, defragmented);
        // The run is under way: the edit putting the schedule back waits for it (the target is latched).
        if ('running' in look && look.running) await putBack();
        return look;
      },
      { timeoutMs: c.timeoutMs, ...(signal ? { signal } : {}) },
    );
    await putBack();
    if (c.output !== 'text') printObject(io, done, c.output);
    else io.stdout(`Defragmented ${done.status} (${done.reason}): ${done.message}\n`);
    return done.status === 'True' ? 0 : 1;
  } finally {
    await putBack().catch((err: unknown) =>
      io.stderr(
        `could not put spec.maintenance of ${c.name} back (${(err as Error).message}): set it by hand, or it defragments every minute\n`,
      ),
    );
  }
}
