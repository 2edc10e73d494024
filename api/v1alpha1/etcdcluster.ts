/** EtcdCluster: the user's request for an etcd cluster, and what the operator reports back. */
import { s, type Kind } from '../schema.ts';
import {
  conditions,
  DEFAULT_ETCD_VERSION,
  etcdID,
  etcdVersion,
  memberRole,
  resumeFields,
  storage,
  stringMap,
} from './common.ts';
import { options } from './etcdoptions.ts';
import { snapshotDestination, snapshotSource } from './etcdsnapshot.ts';
import { defrag } from './maintenance.ts';
import { auth, tls } from './tls.ts';

/** Longest cluster name: member (`<name>-<n>`), Pod, PVC and Service names must stay DNS labels. */
export const MAX_CLUSTER_NAME = 50;

/**
 * The oldest patch of each minor's predecessor that etcd supports upgrading from, from etcd's
 * upgrade guides ("Update 3.5", "Update 3.6"): every 3.5 member on 3.5.32 or later before 3.6,
 * every 3.6 member on 3.6.11 or later before 3.7; earlier patches carry upgrade blockers fixed since.
 */
export const MIN_PATCH_BEFORE: Readonly<Record<string, string>> = { '3.6': '3.5.32', '3.7': '3.6.11' };

const minor = (v: string): string => `int(${v}.split('.')[1])`;
const patch = (v: string): string => `int(${v}.split('.')[2])`;
const NEW = 'self.spec.version';
const OLD = 'oldSelf.spec.version';
/** Back to the version every member still runs: undoing an upgrade that has not finished. */
const ROLLBACK = `(has(oldSelf.status) && has(oldSelf.status.version) && ${NEW} == oldSelf.status.version)`;

/** The oldest minor the operator runs: a 3.5 cluster has nowhere down to go. */
const OLDEST_MINOR = 5;

/** `3.5.32` -> [minor, patch] as numbers. */
const minorPatch = (v: string): [number, number] => [Number(v.split('.')[1]), Number(v.split('.')[2])];

/**
 * The version rules: transition rules on the whole object, since undoing an upgrade reads status.
 * Up one minor at a time from a patch etcd supports upgrading from; down one minor at a time, as
 * etcd's downgrade goes (docs/upgrades.md, "Downgrades"), to a patch fit to run beside the newer minor.
 */
const versionRules = [
  {
    rule: `${NEW} == ${OLD} || ${ROLLBACK} || ${minor(NEW)} != ${minor(OLD)} || ${patch(NEW)} > ${patch(OLD)}`,
    message:
      "spec.version cannot go to an older patch of the same minor. Going down is one minor at a time (3.7 to 3.6, 3.6 to 3.5, by etcd's downgrade); while an upgrade is unfinished, going back to status.version (the version every member still runs) is allowed",
    fieldPath: '.spec.version',
  },
  {
    rule: `${NEW} == ${OLD} || ${ROLLBACK} || ${minor(NEW)} <= ${minor(OLD)} + 1`,
    message:
      'spec.version can move up one minor version at a time (3.5 to 3.6, then 3.6 to 3.7): upgrade to the next minor first',
    fieldPath: '.spec.version',
  },
  {
    rule: `${NEW} == ${OLD} || ${ROLLBACK} || ${minor(NEW)} >= ${minor(OLD)} - 1`,
    message:
      "spec.version can move down one minor version at a time (3.7 to 3.6, then 3.6 to 3.5): etcd's downgrade goes to the previous minor only",
    fieldPath: '.spec.version',
  },
  {
    rule: `${NEW} == ${OLD} || ${minor(NEW)} >= ${OLDEST_MINOR}`,
    message: `etcd 3.${OLDEST_MINOR - 1} is not run by this operator: a 3.${OLDEST_MINOR} cluster cannot be downgraded (restore a snapshot into a 3.${OLDEST_MINOR - 1} cluster outside it)`,
    fieldPath: '.spec.version',
  },
  ...Object.entries(MIN_PATCH_BEFORE).flatMap(([to, from]) => {
    const [fromMinor, fromPatch] = minorPatch(from);
    const toMinor = Number(to.split('.')[1]);
    const fromName = from.split('.').slice(0, 2).join('.');
    return [
      {
        rule: `${NEW} == ${OLD} || ${ROLLBACK} || !(${minor(OLD)} == ${fromMinor} && ${minor(NEW)} == ${toMinor}) || ${patch(OLD)} >= ${fromPatch}`,
        message: `upgrade to ${from} or later before ${to}: etcd's upgrade guide asks every ${fromName} member to run ${from} or later first`,
        fieldPath: '.spec.version',
      },
      {
        rule: `${NEW} == ${OLD} || ${ROLLBACK} || !(${minor(OLD)} == ${toMinor} && ${minor(NEW)} == ${fromMinor}) || ${patch(NEW)} >= ${fromPatch}`,
        message: `downgrade to ${from} or later: a downgrade from ${to} runs ${fromName} and ${to} members side by side, as an upgrade does, and etcd's upgrade guide asks ${fromName} members to run ${from} or later for that`,
        fieldPath: '.spec.version',
      },
    ];
  }),
];

const spec = s.object(
  'The etcd cluster the user wants.',
  {
    replicas: s.integer(
      'Number of voting members. 0 parks the cluster (dormant): Pods go, data stays, and scaling up again resumes the same cluster. Odd numbers tolerate as many failures as the next even one.',
      {
        format: 'int32',
        default: 3,
        minimum: 0,
        maximum: 9,
      },
    ),
    version: etcdVersion(
      `etcd version of every member. Changing it rolls the members onto it one at a time, followers before the leader, each back healthy and in sync before the next. Allowed: a newer patch of the same minor, or the next minor from a patch etcd supports upgrading from (${Object.entries(
        MIN_PATCH_BEFORE,
      )
        .map(([to, from]) => `${to} needs ${from} or later`)
        .join(', ')}), or the previous minor, through etcd's downgrade API (${Object.entries(MIN_PATCH_BEFORE)
        .map(([to, from]) => `${to} to ${from} or later`)
        .join(
          ', ',
        )}). An older patch of the same minor is refused, except back to status.version while an upgrade is unfinished.`,
      {
        default: DEFAULT_ETCD_VERSION,
      },
    ),
    storage,
    resources: s.external(
      "CPU and memory requests and limits of the etcd container. Unset, the manager's --member-requests (the chart: cpu 100m, memory 256Mi); set, these replace them whole.",
      'V1ResourceRequirements',
    ),
    affinity: s.external(
      'Scheduling affinity of member Pods (a core/v1 Affinity). When neither this, topologySpreadConstraints nor the podTemplate sets any, each member prefers a node (kubernetes.io/hostname) no other member of the cluster runs on: one member per node when there are enough nodes, and still a place for a replacement when one is down.',
      'V1Affinity',
    ),
    topologySpreadConstraints: s.external(
      'How member Pods spread across topology domains (core/v1 TopologySpreadConstraints).',
      'V1TopologySpreadConstraint',
      { array: true },
    ),
    additionalMetadata: s.object(
      'Labels and annotations added to everything the operator creates for this cluster (members, Pods, PVCs, Services).',
      { labels: stringMap('Labels to add.'), annotations: stringMap('Annotations to add.') },
      { name: 'AdditionalMetadata' },
    ),
    podTemplate: s.object(
      "Overrides merged into each member Pod: extra metadata and Pod spec fields (for example tolerations, priorityClassName, nodeSelector). The etcd container, volumes and hostname stay the operator's.",
      {
        metadata: s.object(
          'Labels and annotations for member Pods.',
          { labels: stringMap('Labels to add.'), annotations: stringMap('Annotations to add.') },
          { name: 'PodTemplateMetadata' },
        ),
        spec: s.external(
          "Pod spec fields merged over the operator's (a core/v1 PodSpec with nothing required). hostname, subdomain and ephemeralContainers are refused: the first two are a member's identity, the last cannot be set on a new Pod.",
          'Partial<V1PodSpec>',
        ),
      },
      { name: 'PodTemplateOverrides' },
    ),
    options,
    tls,
    auth,
    bootstrap: s.object(
      'How the cluster starts. Fixed at creation.',
      {
        restore: s.object(
          "Start from a snapshot instead of empty: the snapshot is verified first (a Job reads it whole and checks its SHA-256 and etcd's own hash; a bad one fails the cluster before any member starts), the seed member is restored from it with new member IDs, revisions bumped by 1,000,000,000 and marked compacted (so watchers of the old cluster resynchronise), and the other members join it as learners.",
          {
            snapshotName: s.string('An EtcdSnapshot in the same namespace; it must be Succeeded.', { maxLength: 253 }),
            source: snapshotSource,
          },
          {
            name: 'RestoreSpec',
            rules: [
              {
                rule: 'has(self.snapshotName) != has(self.source)',
                message: 'bootstrap.restore needs exactly one of snapshotName and source',
              },
            ],
          },
        ),
      },
      {
        name: 'BootstrapSpec',
        rules: [{ rule: 'self == oldSelf', message: 'spec.bootstrap cannot change after creation' }],
      },
    ),
    upgrade: s.object(
      'How a change of spec.version rolls.',
      {
        snapshot: s.object(
          'A snapshot before the roll: before the first member restarts on a new version, an EtcdSnapshot named <cluster>-pre-v<version> (dots as dashes) is taken to this destination, and the roll starts only once it succeeded. It is not owned by the cluster: it stays as the way back (restored into a new cluster) until you delete it. Left out, the roll starts without one, and the cluster says so.',
          { destination: snapshotDestination },
          { name: 'UpgradeSnapshot', required: ['destination'] },
        ),
      },
      { name: 'UpgradeSpec' },
    ),
    maintenance: s.object(
      'Maintenance the operator does on its own. Without it, still: when etcd raises its NOSPACE alarm (the database reached options.quotaBackendBytes), the history is compacted, every member defragmented and the alarm disarmed once the data fits well under the quota (see docs/maintenance.md).',
      { defrag },
      { name: 'Maintenance' },
    ),
    recovery: s.object(
      "A recovery from a quorum lost for good, asked for explicitly (docs/recovery.md). Set a new requestID to ask; the operator acts on each requestID once and reports it in the Recovered condition, which says what is lost before anything is changed and again once done. from survivor: the member with the highest raft applied index among those that answer is restarted once with etcd's --force-new-cluster (it keeps its data, member ID and the cluster ID), every other EtcdMember is deleted, and new members join it as learners until spec.replicas voters run, under the same name, Services and client endpoints; what the lost members had and the survivor did not is lost. from snapshot: every member's Pod is stopped (volumes kept), a new seed member is restored from the snapshot (revisions bumped by 1,000,000,000 and marked compacted, so watchers see a compaction, never revisions going back), the old EtcdMembers are deleted once it answers, and new members join it as learners, under the same name, Services and client endpoints; every write after the snapshot's revision is lost. Refused, with nothing changed: while a quorum of voters answers (unless rollback says to roll the cluster back to snapshotName); from survivor when no member answers, or when member names one that is not the most advanced; from snapshot when no Succeeded snapshot of this cluster is found, when the snapshot named failed its verification, or when it is of another cluster without allowOtherCluster. A new requestID while a recovery runs is refused: one at a time. A snapshot deleted after it was found and before the new seed is made ends the recovery refused, and the stopped members start again with their volumes as they were.",
      {
        requestID: s.string(
          'Any string that names this request, for example a date. A value acted on before (or the one in flight) is not acted on again.',
          { minLength: 1, maxLength: 63 },
        ),
        from: s.string(
          'Where the data comes from: survivor (the most advanced member that still answers) or snapshot (an EtcdSnapshot: snapshotName, or the newest Succeeded one of this cluster whose verification did not fail).',
          { enum: ['survivor', 'snapshot'], default: 'survivor' },
        ),
        member: s.string(
          'from survivor: the survivor you expect: the recovery is refused unless this member answers and no answering member has applied more of the raft log. Left out, the operator picks the most advanced.',
          { maxLength: 63 },
        ),
        snapshotName: s.string(
          'from snapshot: the EtcdSnapshot to restore, in the same namespace; it must be Succeeded and not failed its verification. Left out, the newest such snapshot of this cluster (by completion time).',
          { maxLength: 253 },
        ),
        rollback: s.boolean(
          "from snapshot: roll a cluster whose quorum answers back to the snapshot named in snapshotName, in place (same name, Services and client endpoints): every write after the snapshot's revision is lost. Without it a recovery is refused while a quorum answers, so a healthy cluster's data is never thrown away by a typo.",
        ),
        allowOtherCluster: s.boolean(
          "from snapshot: restore a snapshot whose clusterRef names another EtcdCluster. Without it such a snapshot is refused: a snapshot of another cluster replaces this one's data with that cluster's.",
        ),
      },
      {
        name: 'RecoverySpec',
        required: ['requestID'],
        rules: [
          {
            rule: "!has(self.member) || !has(self.from) || self.from == 'survivor'",
            message: 'recovery.member names a survivor: it is for from: survivor only',
          },
          {
            rule: "(!has(self.snapshotName) && !has(self.allowOtherCluster)) || (has(self.from) && self.from == 'snapshot')",
            message: 'recovery.snapshotName and recovery.allowOtherCluster are for from: snapshot only',
          },
          {
            rule: "!has(self.rollback) || !self.rollback || (has(self.from) && self.from == 'snapshot' && has(self.snapshotName))",
            message:
              'recovery.rollback needs from: snapshot and snapshotName: a rollback names the snapshot it goes back to',
          },
        ],
      },
    ),
    progressDeadlineSeconds: s.integer(
      'Seconds one step (bootstrap a member, join a learner, promote, remove...) may take before the cluster reports the step as stuck in its Progressing and Degraded conditions. The step keeps trying.',
      {
        format: 'int32',
        default: 600,
        minimum: 30,
        maximum: 86400,
      },
    ),
  },
  {
    name: 'EtcdClusterSpec',
    rules: [
      {
        rule: "!(has(self.storage.medium) && self.storage.medium == 'Memory' && self.replicas == 0)",
        message: 'a cluster with storage.medium Memory cannot have 0 replicas: its data lives only in the running Pods',
        fieldPath: '.replicas',
      },
      {
        rule: '!has(self.options) || !has(self.options.quotaBackendBytes) || !isQuantity(string(self.options.quotaBackendBytes)) || !isQuantity(string(self.storage.size)) || quantity(string(self.options.quotaBackendBytes)).isLessThan(quantity(string(self.storage.size)))',
        message:
          'options.quotaBackendBytes must be smaller than storage.size, or the volume fills before etcd stops writes',
        fieldPath: '.options.quotaBackendBytes',
      },
      {
        rule: "!has(self.options) || !has(self.options.maxLearners) || !self.version.startsWith('3.5.')",
        message: 'options.maxLearners needs etcd 3.6 or newer: etcd 3.5 has no --max-learners flag',
        fieldPath: '.options.maxLearners',
      },
      {
        rule: '!has(self.bootstrap) || !has(self.bootstrap.restore) || self.replicas > 0',
        message: 'a cluster restored from a snapshot needs replicas of at least 1',
        fieldPath: '.replicas',
      },
      {
        rule: 'has(self.bootstrap) == has(oldSelf.bootstrap)',
        message: 'spec.bootstrap cannot be added or removed after creation',
        fieldPath: '.bootstrap',
      },
      {
        rule: 'has(self.tls) == has(oldSelf.tls)',
        message:
          'spec.tls cannot be added or removed after creation: members cannot switch between http and https while running; create a new cluster with the TLS you want (a snapshot restores the data into it)',
        fieldPath: '.tls',
      },
      {
        rule: '!has(self.auth) || !self.auth.enabled || (has(self.tls) && has(self.tls.client))',
        message:
          'spec.auth.enabled needs spec.tls.client: the operator authenticates to etcd by its client certificate (common name root), and a password would cross the network in the clear without TLS',
        fieldPath: '.auth.enabled',
      },
      {
        rule: '(has(self.auth) && self.auth.enabled) == (has(oldSelf.auth) && oldSelf.auth.enabled)',
        message:
          'spec.auth.enabled cannot change after creation: the operator turns etcd authentication on when the cluster starts, and never off; create a new cluster with the setting you want (a snapshot restores the data into it, users and roles included)',
        fieldPath: '.auth.enabled',
      },
    ],
  },
);

const status = s.object(
  'What the operator observed and is doing.',
  {
    observedGeneration: s.integer('metadata.generation the operator last acted on.', { format: 'int64' }),
    observed: s.object(
      'The step in flight. The target is latched when a step starts: spec edits made meanwhile wait until it is reached.',
      {
        target: s.object(
          'The latched target.',
          {
            replicas: s.integer('Voting members wanted.', { format: 'int32' }),
            version: s.string('etcd version wanted.'),
          },
          { name: 'ObservedTarget' },
        ),
        step: s.string(
          "Current step, the cluster machine's state (Bootstrapping, ScalingUp, Steady...); a roll reads Upgrading or Downgrading by the way its version goes, RollingCA when it moves no version and only restarts members onto new CAs.",
        ),
        sequence: s.integer('Number of the step, increasing by one per transition.', { format: 'int64' }),
        stepStartedAt: s.string('When the current step started.', { format: 'date-time' }),
        ...resumeFields,
      },
      { name: 'ObservedStep' },
    ),
    conditions,
    readyMembers: s.integer('Members that are voters, healthy and ready.', { format: 'int32' }),
    members: s.array(
      'Every member the operator manages.',
      s.object(
        'One member.',
        {
          name: s.string("EtcdMember name (also its Pod's)."),
          memberID: etcdID('etcd member ID in hexadecimal, once added.'),
          role: memberRole('voter or learner.'),
          state: s.string("The member machine's state (JoiningLearner, Promoting, Voter...)."),
          version: s.string('The etcd version the member answers with (its EtcdMember spec.version until it answers).'),
        },
        { name: 'MemberSummary', required: ['name'] },
      ),
      { listType: 'map', listMapKeys: ['name'] },
    ),
    clusterID: etcdID('etcd cluster ID in hexadecimal, latched when the seed member starts.'),
    version: s.string(
      'The etcd version every member runs; while a rolling upgrade is under way, the oldest one still running. spec.version may go back to it until the upgrade finishes.',
    ),
    selector: s.string('Label selector of the member Pods (for the scale subresource).'),
    recovery: s.object(
      'The last spec.recovery request handled and how it ended (the Recovered condition says why). A manager that lost its journal reads it back, so a requestID still in the spec is not judged again.',
      {
        requestID: s.string('The requestID handled.'),
        result: s.string('Recovered, or Refused (nothing restored).', { enum: ['Recovered', 'Refused'] }),
        time: s.string('When it ended.', { format: 'date-time' }),
      },
      { name: 'RecoveryStatus', required: ['requestID', 'result'] },
    ),
  },
  { name: 'EtcdClusterStatus' },
);

/** The EtcdCluster kind. */
export const etcdCluster: Kind = {
  kind: 'EtcdCluster',
  plural: 'etcdclusters',
  singular: 'etcdcluster',
  // Not `etcd`: that is etcd-druid's Etcd kind.
  shortNames: ['etcdc'],
  categories: ['etcd-operator'],
  description:
    'An etcd cluster run by etcd-operator: started with all its members at once (a restore from one seed member), grown one learner at a time, scaled, parked at zero and healed.',
  spec,
  status,
  rules: [
    {
      rule: `self.metadata.name.size() <= ${MAX_CLUSTER_NAME}`,
      message: `metadata.name must be at most ${MAX_CLUSTER_NAME} characters, so that member, Pod and Service names derived from it stay valid DNS labels`,
    },
    {
      rule: "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
      message:
        "metadata.name must start with a letter and hold only lowercase letters, digits and '-' (it names Services)",
    },
    ...versionRules,
  ],
  printerColumns: [
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyMembers', description: 'Ready voting members' },
    { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Wanted voting members' },
    { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'etcd version' },
    { name: 'Step', type: 'string', jsonPath: '.status.observed.step', description: 'Current step' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Age' },
  ],
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.readyMembers',
    labelSelectorPath: '.status.selector',
  },
};
