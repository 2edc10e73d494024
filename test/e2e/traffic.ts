/**
 * Traffic a user's application would send while the operator works: one writer putting keys
 * in order and one watcher, both real etcd clients through the cluster's client Service, as
 * an application in the cluster reaches it. What they saw is the proof that a disruption cost
 * nothing: no write failed for the client, the watch saw every acknowledged revision, and
 * every acknowledged key reads back. With `history`, recorded traffic of several clients and
 * watchers runs beside them through the same Service and is checked for linearizability and
 * the watch guarantees (test/history/, docs/reliability.md).
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import { Etcd3, isRecoverableError, type IOptions, type Watcher } from 'etcd3';
import type { EtcdClientTLS } from '../../effects/etcd/index.ts';
import { clientServiceName, LABEL } from '../../effects/kubernetes/meta.ts';
import { BUMP_REVISION } from '../../machines/policy.ts';
import { checkHistory, type Verdict } from '../history/checker.ts';
import type { RollbackSeen } from '../history/history.ts';
import { firstRevision, HistoryTraffic, watchCanceled } from '../history/traffic.ts';

/** How the traffic reaches a cluster with client TLS: its certificate, and the name members' certificates are checked against. */
export interface TrafficTLS {
  readonly client: EtcdClientTLS;
  /** A name the members' certificates cover (the client Service's), checked instead of the ClusterIP dialled. */
  readonly serverName: string;
}

/**
 * How long one write may keep being retried before it counts as failed: a client with a
 * request timeout of this size would have returned an error to the application.
 */
export const WRITE_BUDGET_MS = 10_000;

/**
 * One attempt's deadline. A member on a machine that died answers nothing, not even a reset:
 * without a deadline a write on its connection waits for TCP to give up (45 s was seen). The
 * writer then dials again, and the Service picks an endpoint anew, as an application that
 * reconnects on a timeout does.
 */
const ATTEMPT_MS = 2_000;
/** Writes `stop` waits for after it is called: the cluster is shown writable after what ran. */
const FINAL_WRITES = 5;

/**
 * The pause after each acknowledged write, and between one recorded client's calls (unless
 * `pauseMs` says otherwise). Every call is a write or read through raft on every member: at 20
 * and 25 ms (about 100 calls a second in all) one file's traffic kept its three members at 14-18%
 * of a core each, on a machine that runs three such files at once. A stall or failed write shows
 * at this pace as well; the history keeps hundreds of calls a minute to check.
 */
const WRITE_PAUSE_MS = 50;
const HISTORY_PAUSE_MS = 60;

/**
 * gRPC keepalive of the watcher's connection, so a watch on a dead member's connection is
 * dropped and made again (etcd refuses pings more often than every 5 s).
 */
const KEEPALIVE = { 'grpc.keepalive_time_ms': 6_000, 'grpc.keepalive_timeout_ms': 2_000 };

/** What the traffic saw, for the test to assert and print. */
export interface TrafficReport {
  readonly acknowledged: number;
  /** Writes that did not succeed within WRITE_BUDGET_MS, with the last error of each. */
  readonly failed: readonly string[];
  /** The longest time one write took, retries included. */
  readonly longestStallMs: number;
  /** Where the longest write's attempts went and what each met, `address ms: error` in turn. */
  readonly longestAttempts: readonly string[];
  /** Acknowledged revisions the watch never delivered. */
  readonly unwatched: readonly number[];
  /** Acknowledged keys that did not read back with their value (after a rollback: those it kept). */
  readonly lost: readonly string[];
  /** After a rollback: acknowledged keys it certainly lost that read back all the same. */
  readonly revived: readonly string[];
  readonly watchErrors: number;
  /** The history checker's verdict on the recorded traffic (with `history`). */
  readonly history?: Verdict;
}

/** What runs beside the writer and watcher. */
export interface TrafficOptions {
  /** Recorded traffic (3 clients, 2 watchers) checked by the history checker at `stop`. */
  readonly history?: boolean;
  /** Seed of the recorded traffic's mix of calls (1 unless given). */
  readonly seed?: number;
  /** The pause between one recorded client's calls (HISTORY_PAUSE_MS unless given). */
  readonly pauseMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** An endpoint's address without its scheme, as a report prints it. */
const address = (url: string): string => url.replace(/^https?:\/\//, '');

/**
 * Whether an etcd client given every endpoint would try the next one after this error: an
 * attempt's deadline, a connection that failed (gRPC UNAVAILABLE and etcd3's other recoverable
 * errors), the endpoint's circuit breaker open after three of those, or something other than
 * etcd answering at a lost node's Pod address (an HTTP 404 over the default route). The writer holds one
 * endpoint at a time, so it dials the next itself. It used to do so only after a deadline, so a
 * writer on an evicted member's address could spend its whole budget there (three refusals open
 * etcd3's breaker for 5 s, twice in 10 s): the likely cause of a drain's one failed write in
 * session 19's CI run, whose error that run did not print.
 */
const movesOn = (err: unknown): boolean =>
  err instanceof Error &&
  (isRecoverableError(err) ||
    /DEADLINE_EXCEEDED|deadline|circuit breaker is open|Received HTTP status code/i.test(err.message));

/** A writer and a watcher on one cluster, started by `start` and reported on by `stop`. */
export class Traffic {
  readonly #prefix: string;
  readonly #options: TrafficOptions;
  #dial: (attempt: number, avoid?: string) => Promise<IOptions> = () => {
    throw new Error('Traffic.start first');
  };
  #history: HistoryTraffic | null = null;
  /** How many times the writer has dialled again after an attempt's deadline. */
  #redials = 0;
  #client: Etcd3 | null = null;
  #writer: Etcd3 | null = null;
  /** The address the writer dialled. */
  #writerHost = '';
  #watcher: Watcher | null = null;
  /** The watcher's client and watch made again after etcd canceled the first (a rollback). */
  #again: { etcd: Etcd3; watcher: Watcher; from: number } | null = null;
  #rollback: RollbackSeen | null = null;
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  readonly #acked = new Map<string, number>();
  readonly #failed: string[] = [];
  readonly #watched = new Set<number>();
  #longest = 0;
  #longestAttempts: readonly string[] = [];
  #watchErrors = 0;

  constructor(prefix: string, options: TrafficOptions = {}) {
    this.#prefix = prefix;
    this.#options = options;
  }

  /**
   * Connects through the client Service's ClusterIP (https with `tls`) and starts writing and
   * watching. After an attempt's deadline a client dials again as an etcd client given every
   * endpoint does: the member Pods' addresses in turn (read anew each time, as members are
   * replaced), no longer the Service, which may pick the same member again. The writer also skips
   * the address that just failed, so a member cut off the network costs it at most one more
   * attempt.
   */
  async start(core: CoreV1Api, namespace: string, cluster: string, tls?: TrafficTLS): Promise<void> {
    const svc = await core.readNamespacedService({ name: clientServiceName(cluster), namespace });
    const url = (ip: string | undefined) => `${tls ? 'https' : 'http'}://${ip}:2379`;
    const members = async (): Promise<string[]> => {
      const pods = await core
        .listNamespacedPod({ namespace, labelSelector: `${LABEL.cluster}=${cluster},${LABEL.member}` })
        .then((l) => l.items.filter((p) => p.status?.podIP && !p.metadata?.deletionTimestamp))
        .catch(() => []);
      return pods.map((p) => url(p.status?.podIP)).sort();
    };
    const options = async (attempt: number, avoid?: string): Promise<IOptions> => {
      const pods = attempt === 0 ? [] : (await members()).filter((h) => h !== avoid);
      const hosts = pods.length > 0 ? pods : [url(svc.spec?.clusterIP)];
      return {
        hosts: [hosts[attempt % hosts.length]!],
        dialTimeout: 2000,
        ...(tls
          ? {
              credentials: { rootCertificate: tls.client.ca, certChain: tls.client.cert, privateKey: tls.client.key },
              grpcOptions: { 'grpc.ssl_target_name_override': tls.serverName, ...KEEPALIVE },
            }
          : { grpcOptions: KEEPALIVE }),
      };
    };
    this.#dial = options;
    if (this.#options.history) {
      // Its own prefix: the writer's keys are not in its model.
      this.#history = new HistoryTraffic({
        prefix: `${this.#prefix}-history`,
        connect: options,
        pauseMs: this.#options.pauseMs ?? HISTORY_PAUSE_MS,
        ...(this.#options.seed === undefined ? {} : { seed: this.#options.seed }),
      });
      await this.#history.start();
    }
    const first = await firstRevision(() => this.#connect());
    this.#client = first.etcd;
    const from = first.revision + 1;
    this.#watcher = await this.#watch(this.#client, from);
    await this.#dialWriter(0);
    this.#running = true;
    this.#loop = this.#write();
  }

  /**
   * The watch from `from`. Canceled by etcd (a rollback's compaction), it is made again once from
   * the cluster's revision then, as an informer relists.
   */
  async #watch(etcd: Etcd3, from: number): Promise<Watcher> {
    const watcher = await etcd.watch().prefix(`${this.#prefix}/`).startRevision(String(from)).create();
    watcher.on('put', (kv) => this.#watched.add(Number(kv.mod_revision)));
    watcher.on('error', (err: Error) => {
      if (!watchCanceled(err) || this.#again || !this.#running) return void this.#watchErrors++;
      void firstRevision(() => this.#connect())
        .then(async (first) => {
          this.#again = {
            etcd: first.etcd,
            watcher: await this.#watch(first.etcd, first.revision + 1),
            from: first.revision + 1,
          };
        })
        .catch(() => void this.#watchErrors++);
    });
    return watcher;
  }

  /**
   * The cluster was rolled back in place while the traffic ran: the writes acknowledged after the
   * snapshot are lost by design, and so are the watch's events of them; the recorded history is
   * checked as two epochs (docs/reliability.md, "A rollback under the history").
   */
  rolledBack(r: RollbackSeen): void {
    this.#rollback = r;
    this.#history?.rolledBack(r);
  }

  /** An etcd client on the endpoint of this attempt. */
  async #connect(attempt = 0): Promise<Etcd3> {
    return new Etcd3(await this.#dial(attempt));
  }

  /** The writer's client on the endpoint of this attempt, not the one it was on. */
  async #dialWriter(attempt: number): Promise<void> {
    const options = await this.#dial(attempt, this.#writerHost);
    this.#writer?.close();
    this.#writerHost = String(options.hosts);
    this.#writer = new Etcd3(options);
  }

  async #write(): Promise<void> {
    for (let i = 0; this.#running; i++) {
      const key = `${this.#prefix}/${i}`;
      const began = Date.now();
      const attempts: string[] = [];
      for (;;) {
        const left = WRITE_BUDGET_MS - (Date.now() - began);
        const tried = Date.now();
        try {
          const deadline = tried + Math.max(1, Math.min(ATTEMPT_MS, left));
          const res = await this.#writer!.put(key).value(`value-${i}`).options({ deadline }).exec();
          this.#acked.set(key, Number(res.header.revision));
          attempts.push(`${address(this.#writerHost)} ${Date.now() - tried} ms: ok`);
          break;
        } catch (err) {
          attempts.push(`${address(this.#writerHost)} ${Date.now() - tried} ms: ${(err as Error).message}`);
          if (Date.now() - began >= WRITE_BUDGET_MS) {
            this.#failed.push(`${key}: ${attempts.join('; ')}`);
            break;
          }
          if (movesOn(err)) await this.#dialWriter(++this.#redials);
          await sleep(100);
        }
      }
      const took = Date.now() - began;
      if (took > this.#longest) {
        this.#longest = took;
        this.#longestAttempts = attempts;
      }
      await sleep(WRITE_PAUSE_MS);
    }
  }

  /**
   * Waits until `n` writes are acknowledged (at most twice the write budget): a disruption begun
   * before the traffic flows would leave the history little to check; `stop` waits so for its last.
   */
  async flowing(n: number): Promise<void> {
    for (let waited = 0; waited < 2 * WRITE_BUDGET_MS && this.#acked.size < n; waited += 50) await sleep(50);
  }

  /**
   * Stops writing once the cluster has taken `FINAL_WRITES` more writes (so a disruption over
   * sooner than a few writes still shows the cluster writable after it; a writer still failing
   * stops when its write fails for good), lets the watch catch up, reads every acknowledged key
   * back, and reports.
   */
  async stop(): Promise<TrafficReport> {
    await this.flowing(this.#acked.size + FINAL_WRITES);
    this.#running = false;
    const recorded = this.#history?.stop();
    recorded?.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    await this.#loop;
    const revisions = [...this.#acked.values()];
    const excused = this.#excused(revisions);
    const unwatched = () => revisions.filter((r) => !this.#watched.has(r) && !excused.watch(r));
    for (let waited = 0; waited < 15_000 && unwatched().length > 0; waited += 200) await sleep(200);
    const stored = await this.#client!.getAll().prefix(`${this.#prefix}/`).strings();
    const readBack = (k: string) => stored[k] === `value-${k.slice(this.#prefix.length + 1)}`;
    const acked = [...this.#acked];
    const lost = acked.filter(([k, r]) => !readBack(k) && !excused.write(r)).map(([k]) => k);
    const revived = acked.filter(([k, r]) => readBack(k) && excused.lost(r)).map(([k]) => k);
    await this.#watcher?.cancel().catch(() => undefined);
    await this.#again?.watcher.cancel().catch(() => undefined);
    this.#client?.close();
    this.#again?.etcd.close();
    this.#writer?.close();
    const history = recorded ? await checkHistory(await recorded) : undefined;
    return {
      acknowledged: this.#acked.size,
      failed: this.#failed,
      longestStallMs: this.#longest,
      longestAttempts: this.#longestAttempts,
      unwatched: unwatched(),
      lost,
      revived,
      watchErrors: this.#watchErrors,
      ...(history ? { history } : {}),
    };
  }

  /**
   * What a rollback excuses, by an acknowledged write's revision: past the snapshot's
   * status.revision and before the new epoch, a write may be held or lost (`write`), certainly
   * lost past the new epoch's lowest revision less the bump (`lost`); the watch owes no event
   * from past the snapshot until where it was made again.
   */
  #excused(revisions: readonly number[]) {
    const r = this.#rollback;
    const from = r ? r.snapshotRevision + BUMP_REVISION : 0;
    const upTo = Math.min(...revisions.filter((rev) => rev >= from)) - BUMP_REVISION;
    const skipped = (rev: number) => r !== null && rev > r.snapshotRevision && rev < from;
    return {
      write: skipped,
      lost: (rev: number) => skipped(rev) && rev > upTo,
      watch: (rev: number) => r !== null && rev > r.snapshotRevision && rev < (this.#again?.from ?? from),
    };
  }

  /** Closes the clients without a report (a test that failed before `stop`). */
  close(): void {
    this.#running = false;
    this.#history?.close();
    this.#client?.close();
    this.#again?.etcd.close();
    this.#writer?.close();
  }
}

/**
 * What the traffic shows went wrong for clients: an acknowledged write lost or never watched (or,
 * after a rollback, one it lost read back), and with `history` a history that is not linearizable, revisions out of order, a watch that
 * skipped or repeated. A write that failed within its budget is not among them: callers that
 * promise none failed check `failed` too.
 */
export function trafficProblems(r: TrafficReport): string[] {
  const h = r.history;
  return [
    ...(r.lost.length > 0 ? [`${r.lost.length} acknowledged writes lost (${r.lost.slice(0, 3).join(', ')})`] : []),
    ...(r.revived.length > 0
      ? [`${r.revived.length} writes the rollback lost read back (${r.revived.slice(0, 3).join(', ')})`]
      : []),
    ...(r.unwatched.length > 0 ? [`${r.unwatched.length} acknowledged revisions never watched`] : []),
    ...(h && h.linearizable !== 'Ok' ? [`linearizable: ${h.linearizable}`] : []),
    ...(h && h.revisionViolations.length > 0 ? [`${h.revisionViolations.length} revision violations`] : []),
    ...(h && h.watch.violations.length > 0 ? [`${h.watch.violations.length} watch violations`] : []),
  ];
}
