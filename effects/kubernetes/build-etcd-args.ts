/**
 * The etcd command line of a member: identity, the URLs it listens on and advertises, how it
 * starts (a new cluster or joining one), and the cluster's typed options as flags.
 */
import type { EtcdCluster, EtcdMember, EtcdOptions } from '../../api/v1alpha1/index.ts';
import { peerURL } from '../../machines/policy.ts';
import { CLIENT_PORT, METRICS_PORT, memberClientURL, PEER_PORT } from './build-services.ts';
import { etcdTLSFlags, tlsOf } from './build-tls.ts';

/** Where the data volume is mounted in the etcd container. */
export const DATA_MOUNT = '/var/lib/etcd';
/** The data directory, a subdirectory so etcd owns it whole (lost+found stays out). */
export const DATA_DIR = `${DATA_MOUNT}/data`;
/** The etcd binary in the quay.io/coreos/etcd images. */
export const ETCD_BINARY = '/usr/local/bin/etcd';

const SUFFIX: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity ("8Gi", "500M", 1024) in bytes; throws on what the API would refuse. */
export function quantityBytes(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.exec(q.trim());
  if (!m) throw new RangeError(`not a byte quantity: ${q}`);
  return Math.round(Number(m[1]) * (SUFFIX[m[2] ?? ''] ?? 1));
}

/** Flags for the typed spec.options; only the ones set, so etcd's defaults apply to the rest. */
export function optionFlags(options: EtcdOptions | undefined, version: string): string[] {
  if (!options) return [];
  const flags: string[] = [];
  const add = (flag: string, value: string | number | undefined): void => {
    if (value !== undefined) flags.push(`--${flag}=${value}`);
  };
  add(
    'quota-backend-bytes',
    options.quotaBackendBytes === undefined ? undefined : quantityBytes(options.quotaBackendBytes),
  );
  add('auto-compaction-mode', options.autoCompactionMode);
  add('auto-compaction-retention', options.autoCompactionRetention);
  add('snapshot-count', options.snapshotCount);
  add('heartbeat-interval', options.heartbeatInterval);
  add('election-timeout', options.electionTimeout);
  // etcd 3.5 has no such flag (it allows one learner, all the operator uses): passing it would stop etcd.
  if (!version.startsWith('3.5.')) add('max-learners', options.maxLearners);
  return flags;
}

/**
 * The full etcd command of a member's container. `$(POD_IP)` is expanded by the kubelet. With
 * TLS, the client and peer URLs are https and require a certificate; the metrics URL stays plain
 * http on its own port, so the kubelet's probes and Prometheus need none (it serves health and
 * metrics, never keys).
 */
export function etcdCommand(member: EtcdMember, cluster: EtcdCluster): string[] {
  const name = member.metadata.name ?? '';
  const ns = member.metadata.namespace ?? '';
  const tls = tlsOf(cluster);
  const ref = { namespace: ns, name: member.spec.cluster, peerTLS: tls.peer };
  const peer = peerURL(ref, name);
  const scheme = (on: boolean): string => (on ? 'https' : 'http');
  const client = scheme(tls.client);
  return [
    ETCD_BINARY,
    `--name=${name}`,
    `--data-dir=${DATA_DIR}`,
    // The loopback too: `kubectl port-forward pod/<member> 2379` dials localhost in the Pod.
    `--listen-client-urls=${client}://$(POD_IP):${CLIENT_PORT},${client}://127.0.0.1:${CLIENT_PORT}`,
    `--listen-peer-urls=${scheme(tls.peer)}://$(POD_IP):${PEER_PORT}`,
    `--listen-metrics-urls=http://$(POD_IP):${METRICS_PORT}`,
    `--advertise-client-urls=${memberClientURL(ref, name, tls.client)}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=${member.spec.initialCluster || `${name}=${peer}`}`,
    `--initial-cluster-state=${member.spec.bootstrap ? 'new' : 'existing'}`,
    `--initial-cluster-token=${cluster.metadata.uid ?? ''}`,
    ...etcdTLSFlags(cluster),
    ...optionFlags(cluster.spec.options, member.spec.version),
    // A recovery's survivor, once: etcd removes every other member and runs as a cluster of one,
    // with its data, member ID and cluster ID. The field is cleared, so the next Pod starts plainly.
    ...(member.spec.forceNewCluster ? ['--force-new-cluster'] : []),
  ];
}
