/** What a user reads about a static start: which member is created, and who has started. */
import { quorum } from '../../policy.ts';
import { nextToCreate, notStarted, startedHealthy, type BootstrapView } from './rules.ts';

/** A step of the start: `creating EtcdMember demo-1 (2 of 3) ...` or who has started and who has not. */
export function startMessage(sub: string, c: BootstrapView): string {
  const plan = c.start;
  if (!plan) return 'starting a new cluster with all its members at once';
  const n = plan.members.length;
  const names = plan.members.map((m) => m.name).join(', ');
  if (!sub.startsWith('awaitingQuorum')) {
    const next = nextToCreate(c);
    const at = next ? plan.members.indexOf(next) + 1 : n;
    return `creating EtcdMember ${next?.name ?? ''} (${at} of ${n}): a new cluster starts with all its members at once, each with the initial cluster ${names}`;
  }
  const up = startedHealthy(c).map((m) => m.name);
  const waiting = notStarted(c);
  return (
    `waiting for a quorum (${quorum(n)} of ${n}) of the initial cluster to start etcd together: ` +
    `${up.length > 0 ? `started ${up.join(', ')}` : 'none started yet'}` +
    `${waiting.length > 0 ? `; not yet ${waiting.join(', ')}` : ''}`
  );
}
