/** Waking a key at a time its machine names (a fire time), however far off it is. */
import type { KindWork } from './kind.ts';

/** Longest a key sleeps before it is looked at again, however far its next fire time (timers cap near 24.8 days). */
export const SCHEDULE_LOOK_MS = 3_600_000;

/** Works `key` again just after `at` (epoch ms), or within `capMs` when that is further; nothing when null. */
export function wakeAt(w: KindWork, key: string, at: number | null, capMs = SCHEDULE_LOOK_MS): void {
  if (at !== null) w.queue.addAfter(key, Math.min(Math.max(0, at - w.now()) + 1, capMs));
}
