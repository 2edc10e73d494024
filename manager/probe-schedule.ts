/**
 * When a cluster at rest is looked at (and its etcd probed) again, without a watch event.
 * What a member's death or a lost quorum does shows in Kubernetes first (the member Pod's
 * readiness probe, every second), and each watch event works the cluster at once; the timer is
 * the fallback for what only etcd says (an alarm, a database grown past a defrag threshold).
 * So a healthy cluster is probed less and less often while every probe finds it the same, and a
 * parked one, which has no etcd to ask, is not looked at on a timer at all.
 */

/** How a cluster looked when its work ended, as the schedule reads it. */
export type RestKind =
  /** Parked at zero: nothing to probe; every input it has is a watched object. */
  | 'dormant'
  /** Steady, and the probe found the same healthy cluster as the last one, with no step taken. */
  | 'quiet'
  /** At rest but something changed, or a resting state that rechecks on time (degraded, out of space). */
  | 'resting';

/** Options of the probe schedule. */
export interface ProbeScheduleOptions {
  /** The first wait after a change (default 15 s). */
  readonly baseMs?: number;
  /** The longest wait between two probes of a quiet cluster (default 120 s). */
  readonly maxMs?: number;
}

/**
 * The wait before the next look, from the last wait (undefined: none yet) and how the cluster
 * looked: doubled from `baseMs` up to `maxMs` while quiet, `baseMs` again after any change, and
 * null (no timer) for a parked cluster.
 */
export function nextProbeDelay(
  previous: number | undefined,
  kind: RestKind,
  options: ProbeScheduleOptions = {},
): number | null {
  const base = options.baseMs ?? 15_000;
  const max = Math.max(base, options.maxMs ?? 120_000);
  if (kind === 'dormant') return null;
  if (kind === 'resting' || previous === undefined) return base;
  return Math.min(Math.max(previous, base) * 2, max);
}

/** The probe schedule of every cluster, by uid. */
export class ProbeSchedule {
  readonly #o: ProbeScheduleOptions;
  readonly #delays = new Map<string, number>();

  constructor(options: ProbeScheduleOptions = {}) {
    this.#o = options;
  }

  /** The wait before the cluster's next look, noted as its last; null for none. */
  next(uid: string, kind: RestKind): number | null {
    const delay = nextProbeDelay(this.#delays.get(uid), kind, this.#o);
    if (delay === null) this.#delays.delete(uid);
    else this.#delays.set(uid, delay);
    return delay;
  }

  /** Starts the cluster's schedule over: its next quiet look waits `baseMs` again. */
  reset(uid: string): void {
    this.#delays.delete(uid);
  }
}
