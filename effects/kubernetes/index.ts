/** The Kubernetes effect handlers, by intent kind, and the status and Event writers. */
import { createMember } from './create-member.ts';
import { createPod } from './create-pod.ts';
import { createPVC } from './create-pvc.ts';
import { deleteMember } from './delete-member.ts';
import { deletePod } from './delete-pod.ts';
import { forceDeletePod } from './force-delete-pod.ts';
import { checkCertificates } from './check-certificates.ts';
import { ensureCertificates } from './ensure-certificates.ts';
import { ensureServices } from './ensure-services.ts';
import { growVolume } from './grow-volume.ts';
import { holdSnapshot, releaseSnapshotHold } from './hold-snapshot.ts';
import { releaseFinalizer } from './release-finalizer.ts';
import { createRestoreJob } from './restore-job.ts';
import { resolveRecoverySnapshot } from './resolve-recovery-snapshot.ts';
import { setDisruptionBudget } from './set-disruption-budget.ts';
import { setDormant } from './set-dormant.ts';
import { setForceNewCluster } from './set-force-new-cluster.ts';
import { setMemberVersion } from './set-member-version.ts';
import { createUpgradeSnapshot } from './upgrade-snapshot.ts';
import { scheduleHandlers } from './schedule-handlers.ts';
import { snapshotHandlers } from './snapshot-handlers.ts';

/** Every Kubernetes handler, keyed by the intent kind it carries out. */
export const kubernetesHandlers = {
  ensureServices,
  ensureCertificates,
  checkCertificates,
  createMember,
  deleteMember,
  setDormant,
  setMemberVersion,
  setForceNewCluster,
  resolveRecoverySnapshot,
  holdSnapshot,
  releaseSnapshotHold,
  growVolume,
  createUpgradeSnapshot,
  createPVC,
  createPod,
  deletePod,
  forceDeletePod,
  releaseFinalizer,
  createRestoreJob,
  setDisruptionBudget,
  ...snapshotHandlers,
  ...scheduleHandlers,
} as const;

export {
  checkCertificates,
  createMember,
  createPod,
  createPVC,
  deleteMember,
  deletePod,
  ensureCertificates,
  forceDeletePod,
  ensureServices,
  releaseFinalizer,
  setDisruptionBudget,
  setDormant,
};
export type { KubeClients, KubeContext } from './context.ts';
export { DEFAULT_AGENT_IMAGE, kubeClients } from './context.ts';
export { patchClusterStatus, patchMemberStatus, patchScheduleStatus, patchSnapshotStatus } from './patch-status.ts';
export type { StatusWrite } from './patch-status.ts';
export { patchAnnotation } from './patch-resume.ts';
export { EventRecorder } from './record-event.ts';
export type { EventInput, EventSubject, RecordedEvent } from './record-event.ts';
export { buildClientService, buildHeadlessService } from './build-services.ts';
export { buildCertificates, CERTIFICATES, type Certificate } from './build-certificates.ts';
export { authEnabled, issuedName, tlsSources, type TLSPlane } from './tls-sources.ts';
export { buildDisruptionBudget, disruptionBudgetName } from './build-disruption-budget.ts';
export { buildEtcdMember } from './build-member.ts';
export { buildPVC } from './build-pvc.ts';
export { buildPod, CHECK_DATA_CONTAINER } from './build-pod.ts';
export { DEFAULT_ETCD_IMAGE_REPOSITORY, etcdImage, type PodSettings } from './pod-settings.ts';
export { storedAt, snapshotDeleteJobName, snapshotJobName } from './build-snapshot-job.ts';
export { verifyJobName } from './build-verify-job.ts';
export { restoreJobName } from './build-restore.ts';
export { checkTLSSecret, getSecret, operatorTLSUse, type TLSFiles, type TLSSecretUse } from './tls-secrets.ts';
export { FINALIZER, SNAPSHOT_FINALIZER, SCHEDULED_AT, LABEL, clusterLabels, memberLabels, pvcName } from './meta.ts';
