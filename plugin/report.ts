/**
 * What `kubectl etcd status NAME` reports, built from the objects the manager writes (the
 * EtcdCluster's status, conditions and resume annotation; its EtcdMembers; its EtcdSnapshots and
 * schedules) and rendered for people or scripts. Pure: the caller fetches and gives the time.
 */
import type { Condition, EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule } from '../api/v1alpha1/index.ts';
import { readAnnotation, RESUME_ANNOTATION } from '../manager/resume.ts';

/** One member's line. */
export interface MemberReport {
  readonly name: string;
  readonly memberID: string | null;
  readonly role: string | null;
  /** The member machine's state (voter, joiningLearner, notReady...). */
  readonly state: string | null;
  /** healthy: it answered the manager's last status call; down: it did not; unknown: no word. */
  readonly health: 'healthy' | 'down' | 'unknown';
  readonly leader: boolean;
  readonly version: string | null;
  /** Bytes allocated and holding data, when the manager's metrics say. */
  readonly dbSize: number | null;
  readonly dbInUse: number | null;
  /** What keeps it from running, or its step, in the member's own words (its Stuck or Progressing condition). */
  readonly message: string | null;
}

/** A snapshot, as the backup lines show it. */
export interface BackupReport {
  readonly name: string;
  readonly phase: string;
  readonly time: string | null;
  readonly size: number | null;
  readonly location: string | null;
  /** Why it failed, from its conditions. */
  readonly reason: string | null;
}

/** The whole report; `-o json|yaml` prints it as is. */
export interface ClusterReport {
  readonly name: string;
  readonly namespace: string;
  readonly available: { readonly status: string; readonly reason: string; readonly message: string } | null;
  readonly replicas: { readonly desired: number; readonly ready: number };
  readonly version: { readonly wanted: string; readonly running: string | null };
  readonly clusterID: string | null;
  readonly leader: string | null;
  /** The step in flight (or the resting one), since when, and what it says it does and waits for. */
  readonly step: {
    readonly name: string | null;
    readonly since: string | null;
    readonly resting: boolean;
    readonly message: string | null;
  };
  /** Degraded's message when True: what needs attention. */
  readonly attention: string | null;
  readonly members: readonly MemberReport[];
  readonly lastBackup: BackupReport | null;
  readonly lastFailedBackup: BackupReport | null;
  readonly schedules: readonly {
    readonly name: string;
    readonly schedule: string;
    readonly lastSuccessfulTime: string | null;
    readonly nextScheduleTime: string | null;
    readonly healthy: string | null;
  }[];
  readonly conditions: readonly Pick<Condition, 'type' | 'status' | 'reason' | 'message'>[];
  /** Why database sizes are missing, when they are. */
  readonly sizesNote: string | null;
}

/** What status gathers. */
export interface ClusterObjects {
  readonly cluster: EtcdCluster;
  readonly members: readonly EtcdMember[];
  readonly snapshots: readonly EtcdSnapshot[];
  readonly schedules: readonly EtcdSnapshotSchedule[];
  /** Database sizes by member name, from the manager's metrics; a string says why there are none. */
  readonly sizes: ReadonlyMap<string, { dbSize: number; dbInUse: number | null }> | string;
}

interface EtcdView {
  readonly leader?: string | null;
  readonly healthy?: readonly string[];
  readonly members?: readonly { id: string; name: string }[];
}

const cond = (list: readonly Condition[] | undefined, type: string): Condition | undefined =>
  list?.find((c) => c.type === type);

/** The report of one cluster. */
export function clusterReport(o: ClusterObjects): ClusterReport {
  const { cluster } = o;
  const status = cluster.status ?? {};
  const conditions = status.conditions ?? [];
  const resume = readAnnotation(cluster.metadata.annotations?.[RESUME_ANNOTATION]);
  const context = resume?.context as { etcd?: EtcdView; etcdError?: string } | undefined;
  const etcd = context?.etcd;
  const progressing = cond(conditions, 'Progressing');
  const degraded = cond(conditions, 'Degraded');
  const leaderID = etcd?.leader ?? null;
  // The annotation names the leader by ID; the steady message by name.
  const leader =
    etcd?.members?.find((m) => m.id === leaderID)?.name ||
    /; leader ([a-z0-9.-]+)/.exec(progressing?.message ?? '')?.[1] ||
    null;
  const byName = new Map(o.members.map((m) => [m.metadata.name ?? '', m]));
  const summaries = status.members ?? [];
  const names = [...new Set([...summaries.map((m) => m.name), ...byName.keys()])].sort(byOrdinal);
  const members = names.map((name): MemberReport => {
    const s = summaries.find((m) => m.name === name);
    const m = byName.get(name);
    const id = s?.memberID ?? m?.status?.memberID ?? null;
    const stuck = cond(m?.status?.conditions, 'Stuck');
    const mProgressing = cond(m?.status?.conditions, 'Progressing');
    const size = typeof o.sizes === 'string' ? undefined : o.sizes.get(name);
    const health: MemberReport['health'] =
      context?.etcdError || !etcd?.healthy || id === null ? 'unknown' : etcd.healthy.includes(id) ? 'healthy' : 'down';
    return {
      name,
      memberID: id,
      role: s?.role ?? m?.status?.role ?? null,
      state: s?.state ?? m?.status?.state ?? null,
      health,
      leader: leader === name,
      version: s?.version ?? m?.spec.version ?? null,
      dbSize: size?.dbSize ?? null,
      dbInUse: size?.dbInUse ?? null,
      message: stuck?.status === 'True' ? stuck.message : mProgressing?.status === 'True' ? mProgressing.message : null,
    };
  });
  const mine = o.snapshots.filter((s) => s.spec.clusterRef.name === cluster.metadata.name);
  const newest = (phase: string, time: (s: EtcdSnapshot) => string | undefined) =>
    mine.filter((s) => s.status?.phase === phase).sort((a, b) => (time(b) ?? '').localeCompare(time(a) ?? ''))[0];
  const good = newest('Succeeded', (s) => s.status?.completionTime);
  const failed = newest('Failed', (s) => s.status?.completionTime ?? s.status?.startTime ?? stamp(s));
  return {
    name: cluster.metadata.name ?? '',
    namespace: cluster.metadata.namespace ?? '',
    available: pick(cond(conditions, 'Available')),
    replicas: { desired: cluster.spec.replicas, ready: status.readyMembers ?? 0 },
    version: { wanted: cluster.spec.version, running: status.version ?? null },
    clusterID: status.clusterID ?? null,
    leader,
    step: {
      name: status.observed?.step ?? progressing?.reason ?? null,
      since: status.observed?.stepStartedAt ?? null,
      resting: progressing?.status !== 'True',
      message: progressing?.message ?? null,
    },
    attention: degraded?.status === 'True' ? degraded.message : null,
    members,
    lastBackup: good ? backup(good) : null,
    lastFailedBackup: failed ? backup(failed) : null,
    schedules: o.schedules
      .filter((s) => s.spec.clusterRef.name === cluster.metadata.name)
      .map((s) => ({
        name: s.metadata.name ?? '',
        schedule: s.spec.schedule,
        lastSuccessfulTime: s.status?.lastSuccessfulTime ?? null,
        nextScheduleTime: s.status?.nextScheduleTime ?? null,
        healthy: cond(s.status?.conditions, 'BackupHealthy')?.message ?? null,
      })),
    conditions: conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message })),
    sizesNote: typeof o.sizes === 'string' ? o.sizes : null,
  };
}

const pick = (c: Condition | undefined) => (c ? { status: c.status, reason: c.reason, message: c.message } : null);

/** demo-2 before demo-10. */
function byOrdinal(a: string, b: string): number {
  const [x, y] = [a, b].map((n) => Number(/-(\d+)$/.exec(n)?.[1] ?? NaN));
  return Number.isNaN(x) || Number.isNaN(y) || a.replace(/\d+$/, '') !== b.replace(/\d+$/, '')
    ? a.localeCompare(b)
    : (x ?? 0) - (y ?? 0);
}

function backup(s: EtcdSnapshot): BackupReport {
  const failedWhy = (s.status?.conditions ?? []).find((c) => c.status !== 'True' && c.message)?.message ?? null;
  return {
    name: s.metadata.name ?? '',
    phase: s.status?.phase ?? 'Pending',
    time: s.status?.completionTime ?? s.status?.startTime ?? stamp(s) ?? null,
    size: s.status?.size ?? null,
    location: s.status?.location ?? null,
    reason: s.status?.phase === 'Failed' ? failedWhy : null,
  };
}

/** 1536 -> `1.5 KiB`. */
export function bytes(n: number | null): string {
  if (n === null) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  for (; v >= 1024 && i < units.length - 1; i++) v /= 1024;
  return i === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** How long ago `iso` was, at `now`: `12s`, `5m`, `3h`, `2d`. */
export function ago(iso: string | null, now: number): string {
  if (!iso) return '-';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** Rows as aligned columns, the way kubectl prints tables. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths = rows.reduce<number[]>((w, r) => r.map((c, i) => Math.max(w[i] ?? 0, c.length)), []);
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3)))
      .join('')
      .trimEnd(),
  );
}

/** The report for people. */
export function renderReport(r: ClusterReport, now: number): string {
  const lines: string[] = [];
  const avail = r.available ? `${r.available.status} (${r.available.message})` : 'not reported yet';
  lines.push(`EtcdCluster ${r.namespace}/${r.name}`);
  lines.push(`  Available:  ${avail}`);
  lines.push(
    `  Members:    ${r.replicas.ready} of ${r.replicas.desired} ready; leader ${r.leader ?? 'unknown'}` +
      (r.clusterID ? `; cluster ID ${r.clusterID}` : ''),
  );
  lines.push(
    `  Version:    ${r.version.running ?? '-'}` +
      (r.version.running && r.version.running !== r.version.wanted ? ` (rolling to ${r.version.wanted})` : ''),
  );
  const since = r.step.since ? ` for ${ago(r.step.since, now)}` : '';
  lines.push(`  Step:       ${r.step.name ?? 'none yet'}${r.step.resting ? ' (at rest)' : ` (in flight${since})`}`);
  if (r.step.message) lines.push(`              ${r.step.message}`);
  if (r.attention) lines.push(`  Attention:  ${r.attention}`);
  lines.push('');
  const head = ['MEMBER', 'ROLE', 'STATE', 'HEALTH', 'VERSION', 'DB SIZE', 'IN USE', 'ID'];
  const rows = r.members.map((m) => [
    m.leader ? `${m.name} *` : m.name,
    m.role ?? '-',
    m.state ?? '-',
    m.health,
    m.version ?? '-',
    bytes(m.dbSize),
    bytes(m.dbInUse),
    m.memberID ?? '-',
  ]);
  lines.push(...table([head, ...rows]).map((l) => `  ${l}`));
  if (r.leader) lines.push('  (* leader)');
  if (r.sizesNote) lines.push(`  Database sizes: ${r.sizesNote}`);
  for (const m of r.members) if (m.message) lines.push(`  ${m.name}: ${m.message}`);
  lines.push('');
  const b = r.lastBackup;
  lines.push(
    b
      ? `  Last backup:        ${b.name}, ${ago(b.time, now)} ago (${b.time}), ${bytes(b.size)}, ${b.location ?? ''}`.trimEnd()
      : '  Last backup:        none (kubectl etcd snapshot NAME takes one)',
  );
  const f = r.lastFailedBackup;
  if (f) lines.push(`  Last failed backup: ${f.name}, ${ago(f.time, now)} ago: ${f.reason ?? 'see its conditions'}`);
  for (const s of r.schedules) {
    lines.push(
      `  Schedule ${s.name}: "${s.schedule}", next ${s.nextScheduleTime ?? '-'}` + (s.healthy ? `; ${s.healthy}` : ''),
    );
  }
  lines.push('');
  lines.push(
    ...table([
      ['CONDITION', 'STATUS', 'REASON', 'MESSAGE'],
      ...r.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
    ]).map((l) => `  ${l}`),
  );
  return `${lines.join('\n')}\n`;
}

/** creationTimestamp as ISO text (a Date from the client library, text from JSON). */
const stamp = (s: EtcdSnapshot): string | undefined => {
  const t = s.metadata.creationTimestamp as Date | string | undefined;
  return t instanceof Date ? t.toISOString() : t;
};
