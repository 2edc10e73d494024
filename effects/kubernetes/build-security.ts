/**
 * The securityContext of every Pod the operator makes (members, and the snapshot, delete and
 * restore-verify Jobs): the `restricted` Pod Security Standard, as one non-root user whose
 * group owns the volumes. docs/security.md says why each field is there.
 */
import type { V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';

/**
 * The uid and gid etcd and the agent run as: distroless's `nonroot`, which the operator image
 * already runs as (its Dockerfile's USER, the chart's runAsUser). Any non-zero id would pass
 * the standard; one id everywhere means a snapshot the agent wrote is the restore's to read.
 */
export const RUN_AS_ID = 65532;

/**
 * The Pod's part: non-root with a fixed uid and gid (images need no passwd entry for it),
 * fsGroup so the kubelet hands the data volume to that group, recursing only while its root
 * is not yet the group's (a member's volume can be large), and the runtime's seccomp profile.
 */
export const podSecurityContext = (): V1PodSecurityContext => ({
  runAsNonRoot: true,
  runAsUser: RUN_AS_ID,
  runAsGroup: RUN_AS_ID,
  fsGroup: RUN_AS_ID,
  fsGroupChangePolicy: 'OnRootMismatch',
  seccompProfile: { type: 'RuntimeDefault' },
});

/** Each container's part: no privilege escalation (no_new_privs) and no capabilities at all. */
export const containerSecurityContext = (): V1SecurityContext => ({
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
});
