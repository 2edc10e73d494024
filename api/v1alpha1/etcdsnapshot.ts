/** EtcdSnapshot: one snapshot of an EtcdCluster, taken once and stored in S3 or on a PVC. */
import { s, type Kind } from '../schema.ts';
import { conditions, observedMachine } from './common.ts';

/** The Secret with an S3 access key. */
const s3Credentials = s.object(
  'A Secret in the same namespace holding the access key. Only the snapshot Job reads it, as environment variables; the manager never does.',
  {
    name: s.string('Secret name.', { maxLength: 253 }),
    accessKeyIDKey: s.string('Key of the access key ID in the Secret.', {
      default: 'AWS_ACCESS_KEY_ID',
      maxLength: 253,
    }),
    secretAccessKeyKey: s.string('Key of the secret access key in the Secret.', {
      default: 'AWS_SECRET_ACCESS_KEY',
      maxLength: 253,
    }),
  },
  { name: 'S3Credentials', required: ['name'] },
);

/**
 * Longest EtcdSnapshot name: its Jobs are named `<name>-snapshot` and `<name>-delete`, and a Job
 * name must stay a valid label value (63 characters) because its Pods are labelled with it.
 */
export const MAX_SNAPSHOT_NAME = 63 - '-snapshot'.length;

/** A ConfigMap key holding the CA an S3 endpoint's certificate is signed by. */
const caBundle = s.object(
  "The CA that signed an S3 endpoint's TLS certificate, when no public CA did: a ConfigMap key in the same namespace holding it in PEM. The Jobs trust it besides the public CAs.",
  {
    configMapName: s.string('ConfigMap name.', { maxLength: 253 }),
    key: s.string('Key in the ConfigMap.', { default: 'ca.crt', maxLength: 253 }),
  },
  { name: 'CABundle', required: ['configMapName'] },
);

/** Where a snapshot is stored; shared with EtcdSnapshotSchedule. */
export const snapshotDestination = s.object(
  'Where the snapshot is stored: exactly one of s3 and pvc.',
  {
    s3: s.object(
      'An S3 bucket (AWS or any S3-compatible server).',
      {
        endpoint: s.string(
          'URL of an S3-compatible server, such as http://s3.storage.svc:7070. Left out, AWS S3 of the region.',
          { maxLength: 2048, pattern: '^https?://[^\\s]+$' },
        ),
        bucket: s.string('Bucket name. It must exist.', { minLength: 3, maxLength: 63 }),
        keyPrefix: s.string(
          'Prefix of the object key. The key is <keyPrefix><namespace>/<cluster>/<snapshot name>-<uid prefix>.db.',
          { maxLength: 512 },
        ),
        region: s.string('Region of the bucket (default us-east-1).', { maxLength: 64 }),
        forcePathStyle: s.boolean(
          'Address the bucket in the path (http://server/bucket/key) rather than in the host name; most S3-compatible servers need it.',
          { default: false },
        ),
        credentialsSecretRef: s3Credentials,
        caBundle,
      },
      { name: 'S3Destination', required: ['bucket', 'credentialsSecretRef'] },
    ),
    pvc: s.object(
      'A PersistentVolumeClaim in the same namespace; the snapshot is a file on it.',
      {
        claimName: s.string('PersistentVolumeClaim name. It must exist.', { maxLength: 253 }),
        subPath: s.string(
          'Directory inside the volume, relative (no leading /, no ..). The file is <subPath>/<namespace>-<cluster>-<snapshot name>-<uid prefix>.db.',
          {
            maxLength: 512,
            rules: [
              {
                rule: "!self.startsWith('/') && !self.split('/').exists(p, p == '..')",
                message: 'pvc.subPath must be a relative path without ..',
              },
            ],
          },
        ),
      },
      { name: 'PVCDestination', required: ['claimName'] },
    ),
  },
  {
    name: 'SnapshotDestination',
    rules: [
      {
        rule: 'has(self.s3) != has(self.pvc)',
        message: 'destination must have exactly one of s3 and pvc',
      },
    ],
  },
);

/** A stored snapshot to restore from: an S3 object or a file on a PVC, and its SHA-256 when known. */
export const snapshotSource = s.object(
  'A stored snapshot: exactly one of s3 and pvc.',
  {
    s3: s.object(
      'An object in an S3 bucket.',
      {
        endpoint: s.string('URL of an S3-compatible server. Left out, AWS S3 of the region.', {
          maxLength: 2048,
          pattern: '^https?://[^\\s]+$',
        }),
        bucket: s.string('Bucket name.', { minLength: 3, maxLength: 63 }),
        key: s.string('Object key.', { minLength: 1, maxLength: 1024 }),
        region: s.string('Region of the bucket (default us-east-1).', { maxLength: 64 }),
        forcePathStyle: s.boolean('Address the bucket in the path; most S3-compatible servers need it.', {
          default: false,
        }),
        credentialsSecretRef: s3Credentials,
        caBundle,
      },
      { name: 'S3Source', required: ['bucket', 'key', 'credentialsSecretRef'] },
    ),
    pvc: s.object(
      'A file on a PersistentVolumeClaim in the same namespace.',
      {
        claimName: s.string('PersistentVolumeClaim name.', { maxLength: 253 }),
        path: s.string('Path of the file inside the volume, relative (no leading /, no ..).', {
          minLength: 1,
          maxLength: 1024,
          rules: [
            {
              rule: "!self.startsWith('/') && !self.split('/').exists(p, p == '..')",
              message: 'pvc.path must be a relative path without ..',
            },
          ],
        }),
      },
      { name: 'PVCSource', required: ['claimName', 'path'] },
    ),
    sha256: s.string(
      "SHA-256 of the file, in hexadecimal. When given, a snapshot with another is refused before any member starts; etcd's own hash at the end of the file is checked either way.",
      { pattern: '^[0-9a-f]{64}$' },
    ),
  },
  {
    name: 'SnapshotSource',
    rules: [
      { rule: 'has(self.s3) != has(self.pvc)', message: 'a snapshot source must have exactly one of s3 and pvc' },
    ],
  },
);

/** The EtcdCluster to snapshot; shared with EtcdSnapshotSchedule. */
export const clusterReference = s.object(
  'The EtcdCluster to snapshot, in the same namespace.',
  { name: s.string('EtcdCluster name.', { maxLength: 63 }) },
  { name: 'ClusterReference', required: ['name'] },
);

const spec = s.object(
  'The snapshot to take. Fixed once created, except deletionPolicy and verify.',
  {
    clusterRef: clusterReference,
    destination: snapshotDestination,
    deletionPolicy: s.string(
      'What deleting this EtcdSnapshot does to the stored snapshot: Delete removes it (a Job with the same credentials does), Retain keeps it.',
      { enum: ['Delete', 'Retain'], default: 'Delete' },
    ),
    verify: s.boolean(
      "Prove the snapshot once it is stored: a Job restores it into a throwaway etcd that serves no client and checks etcd's HashKV, the revision and the key count against what was recorded as it was taken; the condition Verified says what was checked, or what differed. See docs/snapshots.md.",
      { default: false },
    ),
  },
  {
    name: 'EtcdSnapshotSpec',
    required: ['clusterRef', 'destination'],
    rules: [
      {
        rule: 'self.clusterRef == oldSelf.clusterRef && self.destination == oldSelf.destination',
        message: 'an EtcdSnapshot cannot change what it snapshots or where: create another one',
      },
    ],
  },
);

const status = s.object(
  'Where the snapshot machine stands, and what was stored.',
  {
    observedGeneration: s.integer('metadata.generation the operator last acted on.', { format: 'int64' }),
    phase: s.string(
      'Pending (waiting to start), Running (the Job streams and checks the snapshot), Succeeded (stored and read back whole), Failed (see the conditions), Deleting.',
      { enum: ['Pending', 'Running', 'Succeeded', 'Failed', 'Deleting'] },
    ),
    state: s.string("The snapshot machine's state."),
    member: s.string('The EtcdMember the snapshot is taken from: a healthy voter, a follower when there is one.'),
    jobName: s.string('The Job that takes the snapshot.'),
    startTime: s.string('When the Job was created.', { format: 'date-time' }),
    completionTime: s.string('When the snapshot was stored and checked.', { format: 'date-time' }),
    location: s.string('Where it is: s3://bucket/key, or pvc://claim/path.'),
    size: s.integer('Size in bytes.', { format: 'int64' }),
    sha256: s.string('SHA-256 of the stored bytes, in hexadecimal; the object was read back and matched it.', {
      pattern: '^[0-9a-f]{64}$',
    }),
    revision: s.integer('etcd revision when the snapshot began (the snapshot holds at least this revision).', {
      format: 'int64',
    }),
    etcdVersion: s.string('Version of the etcd member it was taken from.'),
    hashKV: s.integer("etcd's HashKV of the member at revision, recorded as the snapshot was taken.", {
      format: 'int64',
    }),
    compactRevision: s.integer('The revision the member was compacted at when hashKV was recorded (-1: never).', {
      format: 'int64',
    }),
    keys: s.integer('Keys on the member at revision, recorded as the snapshot was taken.', { format: 'int64' }),
    verifiedTime: s.string('When a restore of the stored snapshot was checked against what was recorded.', {
      format: 'date-time',
    }),
    conditions,
    observed: observedMachine,
  },
  { name: 'EtcdSnapshotStatus' },
);

/** The EtcdSnapshot kind. */
export const etcdSnapshot: Kind = {
  kind: 'EtcdSnapshot',
  plural: 'etcdsnapshots',
  singular: 'etcdsnapshot',
  shortNames: ['etcdsnap'],
  categories: ['etcd-operator'],
  description:
    'One snapshot of an EtcdCluster: a Job streams it from a healthy member to S3 or a PVC and reads it back to check its SHA-256. Deleting the EtcdSnapshot deletes the stored snapshot unless deletionPolicy is Retain.',
  spec,
  status,
  rules: [
    {
      rule: `self.metadata.name.size() <= ${MAX_SNAPSHOT_NAME}`,
      message: `metadata.name must be at most ${MAX_SNAPSHOT_NAME} characters, so that the names of its Jobs (<name>-snapshot) stay valid labels`,
    },
  ],
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterRef.name', description: 'EtcdCluster' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Pending, Running, Succeeded, Failed' },
    { name: 'Size', type: 'integer', jsonPath: '.status.size', description: 'Bytes stored' },
    { name: 'Revision', type: 'integer', jsonPath: '.status.revision', description: 'etcd revision' },
    { name: 'Completed', type: 'date', jsonPath: '.status.completionTime', description: 'When it was stored' },
    { name: 'Location', type: 'string', jsonPath: '.status.location', description: 'Where it is', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Age' },
  ],
};
