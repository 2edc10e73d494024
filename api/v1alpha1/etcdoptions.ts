/** EtcdCluster spec.options: the typed set of etcd flags, with the rules that tie them together. */
import { s } from '../schema.ts';

/** etcd's defaults, used where the rules compare one option with another. */
const ETCD_HEARTBEAT_MS = 100;
const ETCD_ELECTION_MS = 1000;

/** spec.options: the etcd flags the operator sets on every member. */
export const options = s.object(
  "etcd flags the operator sets on every member. Left out, etcd's own default applies.",
  {
    quotaBackendBytes: s.quantity(
      "Size limit of the backend database (--quota-backend-bytes); past it etcd raises a NOSPACE alarm and refuses writes. etcd's default is 2Gi; at most 8Gi.",
      {
        rules: [
          {
            rule: "!isQuantity(string(self)) || (quantity(string(self)).isGreaterThan(quantity('0')) && quantity(string(self)).compareTo(quantity('8Gi')) <= 0)",
            message: 'options.quotaBackendBytes must be above 0 and at most 8Gi',
          },
        ],
      },
    ),
    autoCompactionMode: s.string(
      'How auto-compaction retention is read (--auto-compaction-mode): periodic (a time window) or revision (a number of revisions).',
      {
        enum: ['periodic', 'revision'],
      },
    ),
    autoCompactionRetention: s.string(
      'How much history auto-compaction keeps (--auto-compaction-retention): a duration such as 1h or 30m, or a whole number (hours in periodic mode, revisions in revision mode). "0" turns it off.',
      {
        maxLength: 32,
        pattern: '^([0-9]+|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$',
      },
    ),
    snapshotCount: s.integer(
      'Committed transactions between two snapshots of the raft log to disk (--snapshot-count).',
      {
        format: 'int64',
        minimum: 1,
      },
    ),
    heartbeatInterval: s.integer(
      "Milliseconds between leader heartbeats (--heartbeat-interval). etcd's default is 100.",
      {
        minimum: 10,
        maximum: 10000,
      },
    ),
    electionTimeout: s.integer(
      "Milliseconds a follower waits without a heartbeat before it calls an election (--election-timeout). At least five heartbeat intervals, at most 50000. etcd's default is 1000.",
      {
        minimum: 50,
        maximum: 50000,
      },
    ),
    maxLearners: s.integer(
      'How many learners etcd accepts at once (--max-learners). The operator adds one at a time; more only helps manual work.',
      {
        minimum: 1,
        maximum: 10,
      },
    ),
  },
  {
    name: 'EtcdOptions',
    rules: [
      {
        rule: `(has(self.electionTimeout) ? self.electionTimeout : ${ETCD_ELECTION_MS}) >= 5 * (has(self.heartbeatInterval) ? self.heartbeatInterval : ${ETCD_HEARTBEAT_MS})`,
        message: `options.electionTimeout must be at least 5 times options.heartbeatInterval (etcd's defaults are ${ETCD_ELECTION_MS} and ${ETCD_HEARTBEAT_MS})`,
      },
      {
        rule: "!has(self.autoCompactionRetention) || !has(self.autoCompactionMode) || self.autoCompactionMode != 'revision' || self.autoCompactionRetention.matches('^[0-9]+$')",
        message:
          'options.autoCompactionRetention must be a whole number of revisions when autoCompactionMode is revision',
        fieldPath: '.autoCompactionRetention',
      },
    ],
  },
);
