/**
 * The EtcdSnapshot a schedule's run creates: the schedule's cluster, destination and
 * deletionPolicy, labelled with the schedule's name and uid. No owner reference: the garbage
 * collector would delete the backups with the schedule, and a backup should outlive it.
 */
import type { EtcdSnapshot, EtcdSnapshotSchedule } from '../../api/v1alpha1/index.ts';
import { apiVersion } from '../../api/v1alpha1/index.ts';
import { LABEL, SCHEDULED_AT } from './meta.ts';

/** The labels that make an EtcdSnapshot this schedule's own. */
export const scheduleLabels = (schedule: EtcdSnapshotSchedule): Record<string, string> => ({
  [LABEL.managedBy]: 'etcd-operator',
  [LABEL.schedule]: schedule.metadata.name ?? '',
  [LABEL.scheduleUid]: schedule.metadata.uid ?? '',
});

/** Whether the EtcdSnapshot was made by the schedule with this uid. */
export const madeBy = (snapshot: Pick<EtcdSnapshot, 'metadata'>, scheduleUid: string): boolean =>
  scheduleUid !== '' && snapshot.metadata.labels?.[LABEL.scheduleUid] === scheduleUid;

/** The EtcdSnapshot of the run at `scheduledAt` (RFC 3339), named `name`; `verify` when it is an Nth run. */
export function buildScheduledSnapshot(
  schedule: EtcdSnapshotSchedule,
  name: string,
  scheduledAt: string,
  verify = false,
): EtcdSnapshot {
  const { clusterRef, destination, deletionPolicy } = schedule.spec;
  return {
    apiVersion,
    kind: 'EtcdSnapshot',
    metadata: {
      name,
      namespace: schedule.metadata.namespace ?? '',
      labels: scheduleLabels(schedule),
      annotations: { [SCHEDULED_AT]: scheduledAt },
    },
    spec: { clusterRef: { ...clusterRef }, destination: structuredClone(destination), deletionPolicy, verify },
  };
}
