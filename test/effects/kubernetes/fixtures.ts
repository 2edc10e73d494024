/** An EtcdCluster and EtcdMember as the API server would return them, for the builder tests. */
import type { EtcdCluster, EtcdMember } from '../../../api/v1alpha1/index.ts';
import { buildEtcdMember } from '../../../effects/kubernetes/build-member.ts';
import { seedInitialCluster } from '../../../machines/policy.ts';

/** A cluster `demo` in `ns` with defaults filled in; `spec` overrides. */
export function cluster(spec: Partial<EtcdCluster['spec']> = {}): EtcdCluster {
  return {
    apiVersion: 'etcd-operator.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'demo', namespace: 'ns', uid: 'cluster-uid' },
    spec: { replicas: 3, version: '3.6.16', storage: { size: '1Gi' }, progressDeadlineSeconds: 300, ...spec },
  };
}

/** The member `demo-<ordinal>` built for `c`, as stored (with a uid). */
export function member(c: EtcdCluster, ordinal = 0, bootstrap = ordinal === 0): EtcdMember {
  const name = `demo-${ordinal}`;
  const ref = { namespace: 'ns', name: 'demo', uid: 'cluster-uid', peerTLS: Boolean(c.spec.tls?.peer) };
  const built = buildEtcdMember(c, {
    member: name,
    ordinal,
    bootstrap,
    initialCluster: seedInitialCluster(ref, name),
    version: c.spec.version,
  });
  return { ...built, metadata: { ...built.metadata, uid: `member-uid-${ordinal}` } };
}
