import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transition, type AnyStateMachine, type StateNode, type StateValue } from 'xstate';
import type { ObservedMachine } from '../../api/v1alpha1/index.ts';
import type { EffectContext, Handler } from '../../effects/types.ts';
import { Journal } from '../../journal/index.ts';
import { clusterMachine } from '../../machines/cluster.ts';
import { initialClusterContext } from '../../machines/cluster-decide.ts';
import { memberMachine } from '../../machines/member.ts';
import { initialMemberContext } from '../../machines/member-decide.ts';
import { peerURL } from '../../machines/policy.ts';
import {
  briefObserved,
  journalObservedStep,
  newerSource,
  observedMachine,
  OBSERVED_LIMITS,
  readAnnotation,
  readObserved,
  readResume,
  RESUME_ANNOTATION_LIMIT,
  resumeAnnotation,
  RESUMED_EVENT,
} from '../../manager/resume.ts';
import { Runner, type Handlers, type PublishedStep } from '../../manager/runner.ts';
import { path } from '../machines/harness.ts';

/** Every leaf state of a machine, as a dotted path: counted from the machine itself. */
function leafStates(machine: AnyStateMachine): string[] {
  const walk = (node: StateNode<never, never>): string[] => {
    const children = Object.values<StateNode<never, never>>(node.states);
    if (children.length === 0) return node.type === 'history' ? [] : [node.path.join('.')];
    return children.flatMap(walk);
  };
  return walk(machine.root as never);
}

/** status.observed as the API server hands it back: JSON both ways. */
const throughApi = (o: ObservedMachine): ObservedMachine => JSON.parse(JSON.stringify(o)) as ObservedMachine;

const ref = { namespace: 'default', name: 'demo', uid: 'uid-1' };
const url = (n: number): string => peerURL(ref, `demo-${n}`);

/** A cluster context with something in every kind of field: members, etcd's list, a joiner, a failure. */
const clusterContext = {
  ...initialClusterContext(ref),
  spec: { replicas: 3, version: '3.6.16' },
  target: { replicas: 3, version: '3.6.16' },
  members: [{ name: 'demo-0', ordinal: 0, bootstrap: true, dormant: false, state: 'voter', deleting: false }],
  membersSeen: true,
  memberNames: ['demo-0', 'demo-1'],
  etcd: {
    clusterID: 'c1',
    members: [
      { id: 'a0', name: 'demo-0', peerURL: url(0), learner: false },
      { id: 'a1', name: '', peerURL: url(1), learner: true },
    ],
    healthy: ['a0'],
    leader: 'a0',
    learners: { a1: { applied: 3, leader: 9 } },
  },
  clusterID: 'c1',
  nextOrdinal: 2,
  joining: { member: 'demo-1', ordinal: 1, bootstrap: false, memberID: 'a1', initialCluster: `demo-0=${url(0)}` },
  attempts: 2,
  retryAt: 1_700_000_004_000,
  lastError: { code: 'ERR_ETCD_UNHEALTHY', message: 'etcdserver: unhealthy cluster', retryable: true },
  stepStartedAt: 1_700_000_000_000,
  now: 1_700_000_003_500,
};
const memberContext = {
  ...initialMemberContext({
    member: { namespace: 'default', name: 'demo-1', uid: 'uid-m1', cluster: 'demo' },
    bootstrap: false,
    medium: '',
  }),
  pod: { uid: 'pod-1', phase: 'Running', ready: false, deleting: false, restarts: 1, version: '3.6.16' },
  pvcBound: true,
  etcd: { id: 'a1', name: 'demo-1', peerURL: url(1), learner: true },
  podUID: 'pod-1',
  podSeen: true,
  everRan: true,
  podRestarts: { uid: 'pod-1', count: 1 },
  generations: '1/3',
  version: '3.6.16',
  retryAt: null,
  now: 1_700_000_003_500,
};

describe('status.observed: a step round-trips to the same machine snapshot', () => {
  const cases: readonly (readonly [string, AnyStateMachine, object])[] = [
    ['cluster', clusterMachine, clusterContext],
    ['member', memberMachine, memberContext],
  ];
  for (const [name, machine, context] of cases) {
    it(`${name} machine: every state and its context come back equal, with the step's intents`, () => {
      const states = leafStates(machine);
      // Counted from the machine: a state added later is covered without editing this test.
      expect(states.length).toBeGreaterThan(10);
      const intents = [{ type: 'addLearner', params: { member: 'demo-1', peerURL: url(1) } }];
      for (const [i, state] of states.entries()) {
        const before = machine.resolveState({
          value: readObserved({ sequence: 1, state, context: '{}' })!.value,
          context,
        });
        expect(path(before.value), 'the state resolves to itself').toBe(state);
        const point = readObserved(throughApi(observedMachine(i + 7, before, intents)));
        expect(point, state).toBeDefined();
        const after = machine.resolveState({ value: point!.value, context: point!.context });
        const snap = (s: { value: unknown; context: unknown }) => ({ value: s.value, context: s.context });
        expect(snap(after), state).toEqual(snap(before));
        expect(point!.seq).toBe(i + 7);
        expect(point!.intents).toEqual(intents);
      }
    });
  }

  for (const [name, machine, context] of cases) {
    it(`${name} machine: every state and its context come back equal from the resume annotation, whose first line is the step`, () => {
      const intents = [{ type: 'addLearner', params: { member: 'demo-1', peerURL: url(1) } }];
      for (const [i, state] of leafStates(machine).entries()) {
        const before = machine.resolveState({
          value: readObserved({ sequence: 1, state, context: '{}' })!.value,
          context,
        });
        const full = observedMachine(i + 7, before, intents);
        const value = resumeAnnotation(full)!;
        // What kubectl describe shows of it (one line, shortened to 138 characters) begins with the step.
        expect(value.slice(0, 138), state).toMatch(
          new RegExp(`^\\{"sequence":${i + 7},"state":"${state}","intents":\\[`),
        );
        expect(value, state).not.toContain('\n');
        const point = readAnnotation(value)!;
        const after = machine.resolveState({ value: point.value, context: point.context });
        const snap = (x: { value: unknown; context: unknown }) => ({ value: x.value, context: x.context });
        expect(snap(after), state).toEqual(snap(before));
        expect([point.seq, point.intents]).toEqual([i + 7, intents]);
        // status.observed keeps only the sequence and state.
        expect(briefObserved(full)).toEqual({ sequence: i + 7, state });
      }
    });
  }

  it('reads the later of the annotation and status.observed; an older manager wrote the whole step into the status', () => {
    const step = (seq: number) => observedMachine(seq, { value: 'steady', context: clusterContext }, []);
    expect(readResume(resumeAnnotation(step(12))!, briefObserved(step(12)))?.seq).toBe(12);
    // Status written by an older manager, after an annotation of an even older one (or none).
    expect(readResume(resumeAnnotation(step(12))!, throughApi(step(14)))?.seq).toBe(14);
    expect(readResume(undefined, throughApi(step(14)))?.seq).toBe(14);
    // Written since by this manager: the annotation, past the old status's step.
    expect(readResume(resumeAnnotation(step(15))!, throughApi(step(14)))?.seq).toBe(15);
    expect(readResume('not json', undefined)).toBeUndefined();
    expect(readResume(undefined, { sequence: 15, state: 'steady' })).toBeUndefined();
  });

  it('a step too large for an annotation is not carried (the annotation is removed): a manager without its journal adopts the object', () => {
    const huge = { ...clusterContext, memberNames: ['x'.repeat(RESUME_ANNOTATION_LIMIT)] };
    expect(resumeAnnotation(observedMachine(9, { value: 'steady', context: huge }, []))).toBeNull();
  });

  it('a step too large for the CRD is carried without its machine, and reads as no step to resume from', () => {
    const huge = { ...clusterContext, memberNames: ['x'.repeat(OBSERVED_LIMITS.context)] };
    const observed = observedMachine(9, { value: 'steady', context: huge }, []);
    expect(observed).toEqual({ sequence: 9, state: '', context: '', intents: [] });
    expect(readObserved(observed)).toBeUndefined();
  });

  it('refuses a secret-looking value, as the journal does', () => {
    expect(() => observedMachine(3, { value: 'steady', context: { rootPassword: 'hunter2' } }, [])).toThrow(
      /secret-looking/,
    );
  });
});

describe('status.observed: the newer of the journal and the status wins', () => {
  const at = (sequence: number) => readObserved({ sequence, state: 'steady', context: '{}', intents: [] });
  it('the status when the journal has nothing for the object (lost) or an older step', () => {
    expect(newerSource(undefined, at(12))).toBe('status');
    expect(newerSource(11, at(12))).toBe('status');
  });
  it('the journal when it has the same step (it also knows which intents were answered) or a later one', () => {
    expect(newerSource(12, at(12))).toBe('journal');
    expect(newerSource(13, at(12))).toBe('journal');
  });
  it('the journal when the status carries no step (written by an older manager, or too large)', () => {
    expect(newerSource(undefined, readObserved(undefined))).toBe('journal');
    expect(newerSource(undefined, readObserved({ sequence: 4, state: '', context: '', intents: [] }))).toBe('journal');
    expect(newerSource(undefined, readObserved({ sequence: 4, state: 'steady', context: 'not json' }))).toBe('journal');
  });
});

/** etcd's member list as the fake addLearner sees it: peer URL -> ID. */
let etcd: Map<string, string>;
let dir: string;
let clock = 1_000;
const now = (): number => (clock += 5);

/** A fake handler (the real ones touch Kubernetes and etcd). */
function fake(
  kind: string,
  run: () => Promise<Record<string, unknown>>,
  recover?: () => Record<string, unknown> | null,
) {
  const calls = { run: 0, recover: 0 };
  const handler: Handler<never, Record<string, unknown>> = {
    kind,
    run: () => (calls.run++, run()),
    recover: () => {
      calls.recover++;
      const found = recover?.() ?? null;
      return Promise.resolve(found ? { done: true as const, result: found } : { done: false as const });
    },
  };
  return { handler, calls };
}
const ok = (kind: string) => fake(kind, () => Promise.resolve({}));

/** addLearner against the fake etcd: run adds (then, if told, the manager is killed before the answer); recover looks. */
function addLearner(killAfterRun: boolean) {
  const answer = (id: string) => ({ memberID: id, initialCluster: `demo-0=${url(0)},demo-1=${url(1)}` });
  return fake(
    'addLearner',
    () => {
      const id = `b${etcd.size + 1}`;
      etcd.set(url(1), id);
      return killAfterRun ? new Promise(() => {}) : Promise.resolve(answer(id));
    },
    () => (etcd.has(url(1)) ? answer(etcd.get(url(1))!) : null),
  );
}

const clusterRef = { uid: 'uid-1', kind: 'EtcdCluster' as const, namespace: 'default', name: 'demo' };
function runner(journal: Journal, handlers: Handlers<EffectContext>, publish?: (s: PublishedStep) => Promise<void>) {
  return new Runner<EffectContext>({
    journal,
    ref: clusterRef,
    machineName: 'cluster',
    machine: clusterMachine,
    input: { cluster: ref },
    handlers,
    context: () => ({ cluster: ref, signal: AbortSignal.timeout(5000), log: { info() {}, warn() {}, error() {} } }),
    now,
    ...(publish ? { publish } : {}),
  });
}
const voters0 = () => ({
  type: 'etcd.members.listed',
  at: now(),
  etcd: { clusterID: 'c1', members: [{ id: 'a0', name: 'demo-0', peerURL: url(0), learner: false }], healthy: ['a0'] },
});

/**
 * Feeds a new cluster up to the step that adds demo-1 as a learner: its seed (one member), then
 * 2 asked before the bootstrap ended (a cluster of 2 from the start would start whole).
 */
async function upToAddLearner(r: Runner<EffectContext>): Promise<void> {
  const spec = (replicas: number) => ({
    type: 'k8s.cluster.updated' as const,
    at: now(),
    spec: { replicas, version: '3.6.16' },
    progressDeadlineSeconds: 600,
  });
  await r.feed({ type: 'k8s.members.listed', at: now(), members: [] });
  await r.feed(spec(1));
  await r.feed(spec(2));
  await r.feed(voters0());
  void r.feed(voters0()).catch(() => undefined);
  while (path(r.snapshot.value) !== 'bootstrapping.joining.addingLearner.running')
    await new Promise((res) => setImmediate(res));
}

describe('status.observed: a manager that lost its journal resumes mid-step', () => {
  beforeEach(() => {
    etcd = new Map();
    dir = mkdtempSync(join(tmpdir(), 'resume-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // What the object carries: the resume annotation (this manager), or the whole step in status.observed (an older one).
  const FORMS = {
    'the resume annotation': (o: ObservedMachine) => ({
      annotation: resumeAnnotation(o as Required<ObservedMachine>) ?? undefined,
      observed: throughApi(briefObserved(o as Required<ObservedMachine>)),
    }),
    'status.observed as an older manager wrote it': (o: ObservedMachine) => ({
      annotation: undefined,
      observed: throughApi(o),
    }),
  } as const;
  it.each(Object.entries(FORMS))(
    'killed after a learner was added and before its EtcdMember was made, resumed from %s: the same learner goes on, none is added again',
    async (_, form) => {
      const first = Journal.open(join(dir, 'first.db'));
      let carried: ReturnType<typeof form> | undefined;
      const learner = addLearner(true);
      const handlers = { ensureServices: ok('ensureServices').handler, createMember: ok('createMember').handler };
      await upToAddLearner(
        runner(first, { ...handlers, addLearner: learner.handler }, (s) => {
          carried = form(observedMachine(s.seq, s.snapshot, s.intents));
          return Promise.resolve();
        }),
      );
      while (learner.calls.run === 0) await new Promise((res) => setImmediate(res));
      expect([...etcd.values()]).toEqual(['b1']);
      first.close(); // killed; its journal is lost with its volume

      const second = Journal.open(join(dir, 'second.db'));
      const point = readResume(carried?.annotation, carried?.observed);
      expect(point!.intents.map((i) => i.type)).toEqual(['addLearner']);
      expect(newerSource(second.snapshot(clusterRef.uid)?.seq, point)).toBe('status');
      journalObservedStep(second, clusterRef, 'cluster', clusterMachine, point!, now());
      const again = addLearner(false);
      const create = ok('createMember');
      const r = runner(second, { ...handlers, addLearner: again.handler, createMember: create.handler });
      expect(path(r.snapshot.value)).toBe('bootstrapping.joining.addingLearner.running');
      await r.resume();

      expect(again.calls).toEqual({ run: 0, recover: 1 });
      expect([...etcd.values()]).toEqual(['b1']);
      expect(create.calls.run).toBe(1);
      const joining = (r.snapshot.context as typeof clusterContext).joining;
      expect(joining).toMatchObject({ member: 'demo-1', memberID: 'b1' });
      const rows = second.timeline({ uid: clusterRef.uid });
      expect(rows[0]).toMatchObject({ entry: 'event', name: RESUMED_EVENT, seq: point!.seq });
      expect(rows.filter((row) => row.entry === 'outcome').map((o) => [o.name, o.recovered ?? false])).toEqual([
        ['addLearner', true],
        ['createMember', false],
      ]);
      expect(second.snapshot(clusterRef.uid)!.seq).toBeGreaterThan(point!.seq);
      second.close();
    },
  );

  it('killed between the journal write and the status write: resumed from the step before, the lost step is taken again and its intent runs once', async () => {
    const first = Journal.open(join(dir, 'first.db'));
    let status: ObservedMachine | undefined;
    const learner = addLearner(false);
    const handlers = { ensureServices: ok('ensureServices').handler, createMember: ok('createMember').handler };
    const r1 = runner(first, { ...handlers, addLearner: learner.handler }, (s) => {
      // Killed after journaling the addLearner step, before its status: the status keeps the step before.
      if (s.intents.some((i) => i.type === 'addLearner')) return new Promise(() => {});
      status = throughApi(observedMachine(s.seq, s.snapshot, s.intents));
      return Promise.resolve();
    });
    await upToAddLearner(r1);
    expect(first.openIntents(clusterRef.uid).map((i) => i.type)).toEqual(['addLearner']);
    expect(learner.calls.run).toBe(0);
    first.close();

    const second = Journal.open(join(dir, 'second.db'));
    const point = readObserved(status)!;
    expect(point.intents).toEqual([]);
    journalObservedStep(second, clusterRef, 'cluster', clusterMachine, point, now());
    const again = addLearner(false);
    const r2 = runner(second, { ...handlers, addLearner: again.handler });
    await r2.resume();
    await r2.feed(voters0());
    expect(again.calls).toEqual({ run: 1, recover: 0 });
    expect([...etcd.values()]).toEqual(['b1']);
    expect((r2.snapshot.context as typeof clusterContext).joining).toMatchObject({ member: 'demo-1', memberID: 'b1' });
    second.close();
  });

  it('a step whose status write fails runs none of its intents; the next feed publishes it, then runs them once', async () => {
    const journal = Journal.open(join(dir, 'journal.db'));
    let failing = false;
    const order: string[] = [];
    const learner = addLearner(false);
    const run = learner.handler.run.bind(learner.handler);
    learner.handler.run = (params, ctx) => (order.push('run addLearner'), run(params, ctx));
    const r = runner(
      journal,
      {
        ensureServices: ok('ensureServices').handler,
        createMember: ok('createMember').handler,
        addLearner: learner.handler,
      },
      (s) => {
        if (failing) return Promise.reject(new Error('the API server does not answer'));
        order.push(`publish ${s.seq} [${s.intents.map((i) => i.type).join()}]`);
        return Promise.resolve();
      },
    );
    await r.feed({ type: 'k8s.members.listed', at: now(), members: [] });
    // A seed, then 2 asked before its bootstrap ended: demo-1 joins as a learner.
    for (const replicas of [1, 2])
      await r.feed({
        type: 'k8s.cluster.updated',
        at: now(),
        spec: { replicas, version: '3.6.16' },
        progressDeadlineSeconds: 600,
      });
    await r.feed(voters0());
    failing = true;
    await expect(r.feed(voters0())).rejects.toThrow('the API server does not answer');
    expect(learner.calls.run).toBe(0);
    const [open] = journal.openIntents(clusterRef.uid);
    expect(open?.type).toBe('addLearner');

    failing = false;
    order.length = 0;
    await r.feed({ type: 'timer.tick', at: now() });
    // Published first, then asked to recover (nothing found), then run once.
    expect(order.slice(0, 2)).toEqual([`publish ${open!.seq} [addLearner]`, 'run addLearner']);
    expect(learner.calls).toEqual({ run: 1, recover: 1 });
    expect([...etcd.values()]).toEqual(['b1']);
    expect(path(r.snapshot.value)).toBe('bootstrapping.joining.awaitingStart');
    journal.close();
  });
});

describe('status.observed written in the old form: resumed by this manager', () => {
  interface FixtureStep {
    readonly before: { readonly value: StateValue; readonly context: Record<string, unknown> };
    readonly event: { readonly type: string };
    readonly after: string;
  }
  const fixture = JSON.parse(
    readFileSync(new URL('../fixtures/cluster-journal-before-cut.json', import.meta.url), 'utf8'),
  ) as { steps: FixtureStep[] };
  /**
   * The state the machine answers with now: the old one's, but that a new cluster of more than one
   * member whose seed was chosen and not created starts whole since (test/machines/cluster/resume-before-cut.test.ts).
   */
  const answerNow = (step: FixtureStep): string => {
    const c = step.before.context as { target?: { replicas: number }; restore?: object };
    const startsWhole = step.after === 'bootstrapping.seeding.creatingSeed.running' && (c.target?.replicas ?? 0) > 1;
    return startsWhole && !c.restore ? 'bootstrapping.starting.creatingMember.running' : step.after;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'resume-old-form-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it.each(fixture.steps.map((s, i) => [`${path(s.before.value)} + ${s.event.type} -> ${s.after}`, s, i] as const))(
    '%s',
    (_, step, i) => {
      // status.observed as the manager wrote it until now: the whole step, the context as a JSON string; no annotation.
      const old = throughApi({
        sequence: 100 + i,
        state: path(step.before.value),
        context: JSON.stringify(step.before.context),
        intents: [],
      });
      const point = readResume(undefined, old)!;
      expect(newerSource(99 + i, point)).toBe('status');
      const journal = Journal.open(join(dir, `old-form-${i}.db`));
      try {
        journalObservedStep(journal, clusterRef, 'cluster', clusterMachine, point, now());
        // As the runner reads it back from the journal.
        const persisted = journal.snapshot(clusterRef.uid)!.state as { value: StateValue; context: object };
        const resumed = clusterMachine.resolveState({
          value: persisted.value,
          context: persisted.context as never,
        });
        expect(path(resumed.value)).toBe(path(step.before.value));
        const [next] = transition(clusterMachine, resumed, step.event as never);
        expect(path(next.value)).toBe(answerNow(step));
      } finally {
        journal.close();
      }
    },
  );
});
