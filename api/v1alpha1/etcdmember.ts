/** EtcdMember: one etcd member, created and owned by the operator; it owns its Pod and PVC. */
import { s, type Kind } from '../schema.ts';
import { conditions, etcdID, etcdVersion, memberRole, observedMachine, storage } from './common.ts';
import { snapshotSource } from './etcdsnapshot.ts';
import { MEMBER_STATES } from '../../machines/member-state.ts';

const spec = s.object(
  'The member the cluster machine asked for. Written by the operator, not by users.',
  {
    cluster: s.string('Name of the EtcdCluster this member belongs to (same namespace). Fixed.', {
      maxLength: 63,
      rules: [{ rule: 'self == oldSelf', message: 'spec.cluster cannot change' }],
    }),
    version: etcdVersion(
      "etcd version this member runs. Set by the cluster's rolling upgrade, one member at a time: a new value restarts the member's Pod on that version with the same volume and member ID.",
    ),
    trust: s.string(
      "Digest of the CA certificates this member's Pod trusts: the ca.crt of the cluster's client and peer Secrets when the operator last read them. etcd reads its CA files only at start, so the cluster's roll sets a new value one member at a time when a ca.crt changes, and a new value restarts the member's Pod with the same volume and member ID. Absent without TLS.",
      { maxLength: 64 },
    ),
    storage,
    forceNewCluster: s.string(
      "Set by a recovery from a lost quorum (the EtcdCluster's spec.recovery), to its requestID: while set, the member's Pod starts etcd with --force-new-cluster, which makes it a one-member cluster keeping its data, member ID and cluster ID. A new value restarts the Pod with the flag; removing it restarts the Pod without, so the flag acts once.",
      { maxLength: 63 },
    ),
    bootstrap: s.boolean(
      'True for a member of a new cluster: it starts etcd with --initial-cluster-state new and spec.initialCluster, either one of the members a new cluster starts with at once or the seed a restore starts from (spec.restore). Every member added later joins the existing cluster as a learner.',
      {
        default: false,
        rules: [
          { rule: 'self == oldSelf', message: 'spec.bootstrap cannot change: a member is a seed from birth or never' },
        ],
      },
    ),
    initialCluster: s.string(
      'The --initial-cluster this member starts with: name=peerURL pairs of every member of a new cluster, or of the voters and this member for one that joins.',
      { maxLength: 8192 },
    ),
    // The seed of a restored cluster: the snapshot its Pod's init containers fetch, check and
    // restore into the data directory before etcd first starts.
    restore: snapshotSource,
    dormant: s.boolean(
      'True while the cluster is scaled to zero: the Pod is gone and the volume kept, so the member resumes with the same ID.',
      { default: false },
    ),
  },
  { name: 'EtcdMemberSpec', required: ['cluster', 'version'] },
);

const status = s.object(
  "The member machine's view of this member.",
  {
    observedGeneration: s.integer('metadata.generation the operator last acted on.', { format: 'int64' }),
    state: s.string(
      "The member machine's state. Among them: promoting (a learner catching up before promotion), notReady (etcd runs in its Pod but is not Ready), upgrading or downgrading (restarting its Pod with the same volume and member ID on the version its spec names, newer or older than it ran), reconfiguring (the same, on the version it runs: to trust new CAs, or with or without --force-new-cluster for a recovery), rechecking (etcd restarted inside its Pod: a new Pod checks the data first), dormant (scaled to zero: no Pod, the volume kept), nodeLost (its node is down: the cluster replaces it), failed (a failure retrying cannot fix; tried again when the EtcdMember or its EtcdCluster changes).",
      { enum: MEMBER_STATES },
    ),
    memberID: etcdID('etcd member ID in hexadecimal, once etcd knows the member.'),
    role: memberRole('voter or learner.'),
    podName: s.string("The member's Pod."),
    pvcName: s.string("The member's PersistentVolumeClaim (none with storage.medium Memory)."),
    dataInitialized: s.boolean(
      "True once etcd has run on this member's volume: from then on an empty data directory means the data was lost, and the member is replaced instead of started. The Pod's check-data init container then fails with exit code 3 and says so in its termination message.",
    ),
    conditions,
    observed: observedMachine,
  },
  { name: 'EtcdMemberStatus' },
);

/** The EtcdMember kind. */
export const etcdMember: Kind = {
  kind: 'EtcdMember',
  plural: 'etcdmembers',
  singular: 'etcdmember',
  shortNames: ['etcdm'],
  categories: ['etcd-operator'],
  description:
    "One member of an EtcdCluster, owned by the operator. It owns the member's Pod and PersistentVolumeClaim; its finalizer removes the member from etcd before they go.",
  spec,
  status,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.cluster', description: 'EtcdCluster' },
    { name: 'State', type: 'string', jsonPath: '.status.state', description: 'Member machine state' },
    { name: 'Role', type: 'string', jsonPath: '.status.role', description: 'voter or learner' },
    { name: 'MemberID', type: 'string', jsonPath: '.status.memberID', description: 'etcd member ID', priority: 1 },
    { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'etcd version' },
    {
      name: 'Trust',
      type: 'string',
      jsonPath: '.spec.trust',
      description: 'Digest of the CA certificates its Pod trusts',
      priority: 1,
    },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Age' },
  ],
};
