import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EffectError, type EffectContext, type Handler } from '../../effects/types.ts';
import { Journal } from '../../journal/index.ts';
import { clusterMachine } from '../../machines/cluster.ts';
import { ERR } from '../../machines/error-codes.ts';
import { path } from '../machines/harness.ts';
import { Runner, type Handlers } from '../../manager/runner.ts';

const ref = { uid: 'uid-1', kind: 'EtcdCluster' as const, namespace: 'default', name: 'demo' };
const cluster = { namespace: 'default', name: 'demo', uid: 'uid-1' };
let clock = 1_000;
const now = (): number => (clock += 5);

/** A fake handler (the real ones touch Kubernetes and etcd): records calls, can fail, can claim an earlier run happened. */
function fake(
  kind: string,
  opts: {
    fail?: boolean;
    /** It fails in a way retrying cannot fix (EffectError retryable: false). */
    permanent?: boolean;
    recovered?: boolean;
    result?: Record<string, unknown>;
    seen?: (j: Journal) => void;
  } = {},
) {
  const calls = { run: 0, recover: 0 };
  const handler: Handler<never, Record<string, unknown>> = {
    kind,
    run: () => {
      calls.run++;
      opts.seen?.(journal);
      if (opts.fail || opts.permanent)
        return Promise.reject(new EffectError(ERR.EFFECT, `${kind} failed`, { retryable: !opts.permanent }));
      return Promise.resolve(opts.result ?? {});
    },
    recover: () => {
      calls.recover++;
      return Promise.resolve(
        opts.recovered ? { done: true as const, result: opts.result ?? {} } : { done: false as const },
      );
    },
  };
  return { handler, calls };
}

let dir: string;
let journal: Journal;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'runner-'));
  journal = Journal.open(join(dir, 'journal.db'));
});
afterEach(() => {
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

function runner(handlers: Handlers<EffectContext>): Runner<EffectContext> {
  const context = (): EffectContext => ({
    cluster,
    signal: AbortSignal.timeout(5000),
    log: { info: () => {}, warn: () => {}, error: () => {} },
  });
  return new Runner({
    journal,
    ref,
    machineName: 'cluster',
    machine: clusterMachine,
    input: { cluster },
    handlers,
    context,
    now,
  });
}
const spec = {
  type: 'k8s.cluster.updated',
  at: 0,
  spec: { replicas: 3, version: '3.6.16' },
  progressDeadlineSeconds: 600,
};
/** A new cluster as the manager first sees it: no EtcdMembers, then the spec. */
async function feedSpec(r: Runner<EffectContext>): Promise<void> {
  await r.feed({ type: 'k8s.members.listed', at: now(), members: [] });
  await r.feed({ ...spec, at: now() });
}

describe('runner: steps go through the journal', () => {
  it('refuses a step asking for an intent no handler carries out, and journals none of it', async () => {
    const r = runner({});
    await r.feed({ type: 'k8s.members.listed', at: now(), members: [] });
    await expect(r.feed({ ...spec, at: now() })).rejects.toMatchObject({ code: 'ERR_NO_HANDLER' });
    expect(path(r.snapshot.value)).toBe('pending');
    expect(journal.openIntents('uid-1')).toEqual([]);
  });

  it('journals an intent before its effect runs, and feeds the outcome back to the machine', async () => {
    const openAtRun: string[] = [];
    const services = fake('ensureServices', { seen: (j) => openAtRun.push(...j.openIntents().map((i) => i.type)) });
    const create = fake('createMember');
    const r = runner({ ensureServices: services.handler, createMember: create.handler });
    await feedSpec(r);
    expect(openAtRun).toEqual(['ensureServices']);
    expect(path(r.snapshot.value)).toBe('bootstrapping.starting.awaitingQuorum');
    // A new cluster of 3 starts whole: its three members, one step each.
    expect([services.calls.run, create.calls.run]).toEqual([1, 3]);
    expect(journal.openIntents()).toEqual([]);
  });

  it('a failed effect reaches the machine as a failure and is retried after back-off', async () => {
    const services = fake('ensureServices', { fail: true });
    const r = runner({ ensureServices: services.handler });
    await feedSpec(r);
    expect(path(r.snapshot.value)).toBe('bootstrapping.seeding.creatingServices.backingOff');
    await r.feed({ type: 'timer.tick', at: now() + 2000 });
    expect(services.calls.run).toBe(2);
  });

  /** Leaves the journal as a crash between journaling a step and its effect's answer does. */
  async function crashAfterJournal(): Promise<void> {
    const hang: Handler<never, Record<string, unknown>> = {
      kind: 'ensureServices',
      run: () => new Promise(() => {}),
      recover: () => new Promise(() => {}),
    };
    void feedSpec(runner({ ensureServices: hang }));
    while (journal.openIntents().length === 0) await new Promise((r) => setImmediate(r));
  }

  it('after a crash between journal and effect, recover finds the effect done and it is not run again', async () => {
    await crashAfterJournal();
    const again = fake('ensureServices', { recovered: true });
    const create = fake('createMember');
    const r = runner({ ensureServices: again.handler, createMember: create.handler });
    expect(path(r.snapshot.value)).toBe('bootstrapping.seeding.creatingServices.running');
    await r.resume();
    expect(again.calls).toEqual({ run: 0, recover: 1 });
    expect(path(r.snapshot.value)).toBe('bootstrapping.starting.awaitingQuorum');
    expect(create.calls.run).toBe(3);
    const outcomes = journal.timeline({ uid: ref.uid }).filter((row) => row.entry === 'outcome');
    expect(outcomes.map((o) => [o.name, o.recovered ?? false])).toEqual([
      ['ensureServices', true],
      ['createMember', false],
      ['createMember', false],
      ['createMember', false],
    ]);
  });

  it('after a crash before the effect ran, recover says so and the effect runs once', async () => {
    await crashAfterJournal();
    const again = fake('ensureServices');
    const r = runner({ ensureServices: again.handler, createMember: fake('createMember').handler });
    await r.resume();
    expect(again.calls).toEqual({ run: 1, recover: 1 });
    expect(path(r.snapshot.value)).toBe('bootstrapping.starting.awaitingQuorum');
  });

  it('after a crash between the outcome and the step it leads to, resume feeds the journaled outcome: nothing is run or asked again', async () => {
    await crashAfterJournal();
    const [open] = journal.openIntents();
    journal.recordOutcome(ref, open!.id, { ok: true, result: {}, at: now() });
    const services = fake('ensureServices');
    const create = fake('createMember');
    const r = runner({ ensureServices: services.handler, createMember: create.handler });
    expect(path(r.snapshot.value)).toBe('bootstrapping.seeding.creatingServices.running');
    await r.resume();
    expect(services.calls).toEqual({ run: 0, recover: 0 });
    expect(create.calls.run).toBe(3);
    expect(path(r.snapshot.value)).toBe('bootstrapping.starting.awaitingQuorum');
  });

  it('a failure retrying cannot fix stops the machine, and its outcome is journaled as such', async () => {
    const services = fake('ensureServices', { permanent: true });
    const r = runner({ ensureServices: services.handler });
    await feedSpec(r);
    expect(path(r.snapshot.value)).toBe('failed');
    expect(journal.timeline({ uid: ref.uid }).filter((row) => row.entry === 'outcome')).toMatchObject([
      { name: 'ensureServices', ok: false, code: ERR.EFFECT, retryable: false },
    ]);
  });

  /**
   * Resumes after a crash that left a journaled failure unfed to the machine, its flag as given
   * (or none, as every failure was written before it was kept), then lets a minute pass.
   */
  async function resumeAfterFailure(retryable?: boolean): Promise<{ resumed: string; calls: object }> {
    await crashAfterJournal();
    const [open] = journal.openIntents();
    const failure = { ok: false, code: ERR.EFFECT, message: 'ensureServices failed', at: now() } as const;
    journal.recordOutcome(ref, open!.id, retryable === undefined ? failure : { ...failure, retryable });
    const services = fake('ensureServices');
    const r = runner({ ensureServices: services.handler, createMember: fake('createMember').handler });
    await r.resume();
    const resumed = path(r.snapshot.value);
    await r.feed({ type: 'timer.tick', at: now() + 60_000 });
    return { resumed, calls: services.calls };
  }

  it('after a crash between a permanent failure and the step it leads to, resume feeds it as permanent: nothing is tried again', async () => {
    // Journaled as the runner writes it (above) before the manager dies.
    expect(await resumeAfterFailure(false)).toEqual({ resumed: 'failed', calls: { run: 0, recover: 0 } });
  });

  it('a failure journaled without the flag, as every failure was before it was kept, resumes as retryable, as it did', async () => {
    expect(await resumeAfterFailure()).toEqual({
      resumed: 'bootstrapping.seeding.creatingServices.backingOff',
      calls: { run: 1, recover: 0 },
    });
  });

  it('when recover cannot tell whether an effect happened, resume fails and the intent stays open, never run', async () => {
    await crashAfterJournal();
    const calls = { run: 0 };
    const blind: Handler<never, Record<string, unknown>> = {
      kind: 'ensureServices',
      run: () => (calls.run++, Promise.resolve({})),
      recover: () => Promise.reject(new EffectError(ERR.READ_CLUSTER, 'the API server does not answer')),
    };
    await expect(runner({ ensureServices: blind }).resume()).rejects.toThrow('the API server does not answer');
    expect(calls.run).toBe(0);
    expect(journal.openIntents().map((i) => i.type)).toEqual(['ensureServices']);
  });

  it('a new runner on the same journal continues from the last journaled state', async () => {
    const r1 = runner({ ensureServices: fake('ensureServices').handler, createMember: fake('createMember').handler });
    await feedSpec(r1);
    const r2 = runner({});
    expect(path(r2.snapshot.value)).toBe('bootstrapping.starting.awaitingQuorum');
    expect((r2.snapshot.context as { memberNames: string[] }).memberNames).toEqual(['demo-0', 'demo-1', 'demo-2']);
  });

  it('does not journal observations that change nothing', async () => {
    const r = runner({ ensureServices: fake('ensureServices').handler, createMember: fake('createMember').handler });
    await feedSpec(r);
    const before = journal.lastLsn();
    await r.feed({ type: 'timer.tick', at: now() });
    await r.feed({ type: 'timer.tick', at: now() });
    expect(journal.lastLsn()).toBe(before);
  });
});
