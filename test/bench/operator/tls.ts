/**
 * The 3-member bootstrap again with client and peer TLS from Secrets (spec.tls), measured like
 * the plaintext one (apply -> settled), so the two sit side by side in one run.
 */
import { ClusterUnderTest, type Clients } from '../../e2e/etcd-cluster.ts';
import { createClusterSecrets } from '../../e2e/tls-cluster.ts';
import type { TestPki } from '../../effects/etcd/test-pki.ts';
import { createNamespace } from '../../effects/kubernetes/e2e-context.ts';
import { NAME, type OperatorRun } from './measure.ts';
import { since, within } from './poll.ts';

const LIMIT_MS = 240_000;

/** A TLS cluster of `size` in `ns`: apply -> settled, then every member checked over TLS. */
export async function measureTLSBootstrap(kube: Clients, pki: TestPki, ns: string, size: number): Promise<OperatorRun> {
  await createNamespace(kube.core, ns);
  const tls = await createClusterSecrets(kube, pki, ns, NAME);
  const cut = new ClusterUnderTest(kube, ns, NAME, tls.reach);
  const t0 = Date.now();
  const mark = performance.now();
  await cut.create({ replicas: size, tls: tls.spec });
  await within(LIMIT_MS, `${ns} Available over TLS`, cut.settled(size));
  const availableMs = since(mark);
  await cut.verify(size);
  return { namespace: ns, size, t0, availableMs };
}
