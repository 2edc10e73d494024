/** Schema pieces shared by EtcdCluster and EtcdMember. */
import { s, type Schema } from '../schema.ts';

/** etcd versions the operator runs; images are quay.io/coreos/etcd:v<version>. */
// [.] rather than \. because CEL string literals have no \. escape.
export const SUPPORTED_VERSION_PATTERN = '^3[.](5|6|7)[.][0-9]+$';
/** The version a cluster gets when spec.version is left out. */
export const DEFAULT_ETCD_VERSION = '3.6.16';

/** An etcd version field. */
export const etcdVersion = (description: string, o: { default?: string } = {}): Schema =>
  s.string(description, {
    ...o,
    maxLength: 32,
    rules: [
      {
        rule: `self.matches('${SUPPORTED_VERSION_PATTERN}')`,
        message: 'version must be an etcd release 3.5.x, 3.6.x or 3.7.x, such as 3.6.16',
      },
    ],
  });

/** Where a member keeps its data. */
export const storage = s.object(
  'Where each member keeps its data directory.',
  {
    size: s.quantity(
      "Size of each member's volume (PersistentVolumeClaim or Memory emptyDir size limit). May grow, never shrink: raising it expands every member's claim in place, one claim at a time, where its StorageClass allows volume expansion (allowVolumeExpansion), and members made later get the new size. Fixed for storage.medium Memory.",
      {
        default: '1Gi',
        rules: [
          {
            rule: "!isQuantity(string(self)) || quantity(string(self)).isGreaterThan(quantity('0'))",
            message: 'storage.size must be above zero',
          },
          {
            rule: '!isQuantity(string(self)) || quantity(string(self)).compareTo(quantity(string(oldSelf))) >= 0',
            message:
              'storage.size cannot shrink: a PersistentVolumeClaim can only grow, so a smaller size would never apply to the members that have one',
          },
        ],
      },
    ),
    medium: s.string(
      'Memory keeps the data directory in RAM (emptyDir medium Memory): fast, but a member whose Pod goes loses its data and is replaced. Empty means a PersistentVolumeClaim. Fixed at creation.',
      {
        enum: ['', 'Memory'],
      },
    ),
    storageClassName: s.string(
      "StorageClass of each member's PersistentVolumeClaim; empty uses the cluster default. Fixed at creation.",
      { maxLength: 253 },
    ),
  },
  {
    name: 'StorageSpec',
    default: {},
    rules: [
      {
        rule: "(has(self.medium) ? self.medium : '') == (has(oldSelf.medium) ? oldSelf.medium : '')",
        message: 'storage.medium cannot change after creation',
        fieldPath: '.medium',
      },
      {
        rule: "(has(self.storageClassName) ? self.storageClassName : '') == (has(oldSelf.storageClassName) ? oldSelf.storageClassName : '')",
        message: 'storage.storageClassName cannot change after creation',
        fieldPath: '.storageClassName',
      },
      {
        rule: "!has(self.medium) || self.medium != 'Memory' || !isQuantity(string(self.size)) || !isQuantity(string(oldSelf.size)) || quantity(string(self.size)).compareTo(quantity(string(oldSelf.size))) == 0",
        message:
          "storage.size cannot change with storage.medium Memory: each member's data lives in its Pod's memory, whose size limit is set when the Pod is made",
        fieldPath: '.size',
      },
      {
        rule: "!has(self.medium) || self.medium != 'Memory' || !has(self.storageClassName) || self.storageClassName == ''",
        message: 'storage.storageClassName does not apply to storage.medium Memory',
        fieldPath: '.storageClassName',
      },
    ],
  },
);

/** Labels and annotations, as Kubernetes validates their keys. */
export const stringMap = (description: string): Schema => s.map(description, s.string('Value.'));

/** The standard condition list (metav1.Condition), one entry per type. */
export const conditions = s.array(
  'Conditions: Available, Progressing, Degraded and one per step kind, each with a reason and a human message.',
  s.object(
    "One aspect of the object's state.",
    {
      type: s.string('Condition type, such as Available or Progressing.', { maxLength: 316 }),
      status: s.string('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
      observedGeneration: s.integer('metadata.generation the condition was set for.', { format: 'int64', minimum: 0 }),
      lastTransitionTime: s.string('When the status last changed.', { format: 'date-time' }),
      reason: s.string('Machine-readable reason in CamelCase, such as JoiningLearner.', { maxLength: 1024 }),
      message: s.string('What is happening, what it waits for and since when.', { maxLength: 32768 }),
    },
    { name: 'Condition', required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
  ),
  { listType: 'map', listMapKeys: ['type'] },
);

/** The member roles etcd knows. */
export const memberRole = (description: string): Schema => s.string(description, { enum: ['voter', 'learner'] });

/** An etcd member or cluster ID, in hexadecimal as etcdctl prints it. */
export const etcdID = (description: string): Schema => s.string(description, { pattern: '^[0-9a-f]{1,16}$' });

/**
 * What a manager that lost its journal resumes from: the machine's state after the step numbered
 * `sequence`. The step's context and intents are in the object's annotation
 * `etcd-operator.dev/resume` (docs/manager.md, "Without the journal"); `context` and `intents`
 * here are read from a status an older manager wrote, and removed by the next status write.
 */
export const resumeFields = {
  state: s.string("The machine's state after the step, as a dotted path (scalingUp.joining.adding)."),
  context: s.string(
    "Written by older managers: the machine's context after the step, as JSON. Now in the annotation etcd-operator.dev/resume.",
    { maxLength: 262144 },
  ),
  intents: s.array(
    "Written by older managers: the step's intents, in order. Now in the annotation etcd-operator.dev/resume.",
    s.object(
      'One intent.',
      {
        type: s.string('Intent kind, such as addLearner.'),
        params: s.string('Its parameters, as JSON.', { maxLength: 8192 }),
      },
      { name: 'ObservedIntent', required: ['type', 'params'] },
    ),
    { maxItems: 32, listType: 'atomic' },
  ),
};

/** status.observed of an object whose machine journals steps: the last step, for resuming without the journal. */
export const observedMachine = s.object(
  'The step the machine last journaled (the rest of it in the annotation etcd-operator.dev/resume): a manager whose journal is lost or damaged resumes from it mid-step.',
  {
    sequence: s.integer('Number of the step, increasing by one per transition.', { format: 'int64' }),
    ...resumeFields,
  },
  { name: 'ObservedMachine' },
);
