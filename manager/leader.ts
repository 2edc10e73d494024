/**
 * Leader election on a coordination.k8s.io Lease, as client-go does it: take the Lease when it
 * is free or its holder has not renewed it within leaseDurationSeconds, renew it every
 * renewPeriod, and give up leading (the manager exits) when a renewal has not succeeded within
 * renewDeadline, so two managers never act at once. Updates carry the resourceVersion read, so
 * two candidates racing for an expired Lease cannot both win. A clean stop releases the Lease,
 * so the next manager leads at once instead of waiting out the duration.
 */
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Log } from '../effects/types.ts';
import { isConflict, isNotFound } from '../effects/kubernetes/_util.ts';
import { microTime as micro } from '../effects/kubernetes/record-event.ts';

/** Options of LeaderElector. */
export interface LeaderOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  /** Who this manager is (its Pod name). */
  readonly identity: string;
  readonly leaseDurationSeconds?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly log: Log;
}

/** A conflict means another candidate wrote the Lease first: not leading, try again later. */
function lostRace(err: unknown): false {
  if (isConflict(err)) return false;
  throw err;
}

/** Campaigns for, holds and releases one Lease. */
export class LeaderElector {
  readonly #o: Required<Omit<LeaderOptions, 'kubeConfig'>>;
  readonly #api: CoordinationV1Api;
  #leading = false;
  #stopped = false;
  #lastRenew = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LeaderOptions) {
    this.#o = { leaseDurationSeconds: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    this.#api = options.kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /** Whether this manager holds the Lease. */
  get leading(): boolean {
    return this.#leading;
  }

  /** Resolves once this manager leads; `onLost` is called if it stops leading later. */
  async campaign(onLost: (why: string) => void): Promise<void> {
    for (;;) {
      if (this.#stopped) throw new Error('leader election stopped before this manager led');
      if (await this.#tryAcquireOrRenew().catch((err: unknown) => this.#warn('taking the Lease failed', err))) break;
      await new Promise((r) => setTimeout(r, this.#o.retryPeriodMs));
    }
    this.#leading = true;
    this.#lastRenew = Date.now();
    this.#o.log.info({ lease: `${this.#o.namespace}/${this.#o.name}`, identity: this.#o.identity }, 'leading');
    const renew = async (): Promise<void> => {
      if (this.#stopped) return;
      const ok = await this.#tryAcquireOrRenew().catch((err: unknown) => this.#warn('renewing the Lease failed', err));
      if (ok) this.#lastRenew = Date.now();
      else if (Date.now() - this.#lastRenew > this.#o.renewDeadlineMs) {
        this.#leading = false;
        onLost(`the Lease ${this.#o.namespace}/${this.#o.name} was not renewed within ${this.#o.renewDeadlineMs} ms`);
        return;
      }
      this.#timer = setTimeout(() => void renew(), this.#o.retryPeriodMs);
    };
    this.#timer = setTimeout(() => void renew(), this.#o.retryPeriodMs);
  }

  /** Stops renewing and, if leading, releases the Lease for the next manager; true once it did. */
  async release(): Promise<boolean> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    if (!this.#leading) return false;
    this.#leading = false;
    try {
      const lease = await this.#api.readNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace });
      if (lease.spec?.holderIdentity !== this.#o.identity) return false;
      const acquired = micro(lease.spec.acquireTime ? new Date(lease.spec.acquireTime) : new Date()) as unknown as Date;
      lease.spec = {
        ...lease.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: acquired,
        renewTime: micro(new Date()) as unknown as Date,
      };
      await this.#api.replaceNamespacedLease({ name: this.#o.name, namespace: this.#o.namespace, body: lease });
      return true;
    } catch (err) {
      this.#warn('releasing the Lease failed', err);
      return false;
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { name, namespace, identity, leaseDurationSeconds } = this.#o;
    const now = new Date();
    let lease: V1Lease;
    try {
      lease = await this.#api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const body: V1Lease = {
        metadata: { name, namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: micro(now) as unknown as Date,
          renewTime: micro(now) as unknown as Date,
          leaseTransitions: 0,
        },
      };
      return this.#api.createNamespacedLease({ namespace, body }).then(() => true, lostRace);
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = now.getTime() > renewed + (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (holder !== '' && holder !== identity && !expired) return false;
    const mine = holder === identity;
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      renewTime: micro(now) as unknown as Date,
      // The client would send a read Date with milliseconds, which a MicroTime refuses.
      acquireTime: micro(mine && spec.acquireTime ? new Date(spec.acquireTime) : now) as unknown as Date,
      ...(mine ? {} : { leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }),
    };
    return this.#api.replaceNamespacedLease({ name, namespace, body: lease }).then(() => true, lostRace);
  }

  #warn(msg: string, err: unknown): false {
    this.#o.log.warn({ lease: `${this.#o.namespace}/${this.#o.name}`, err: String(err) }, msg);
    return false;
  }
}
