/**
 * The TLS Secrets spec.tls names, checked before anything is built on them: each must exist and
 * hold tls.crt, tls.key and ca.crt, its key must be tls.crt's, and tls.crt must be valid now,
 * cover the names it is used for and allow the usages etcd needs. What is wrong is said with the
 * Secret, the field naming it and the key, never with the contents.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { ROOT_USER, TLS_SECRET_KEYS, type EtcdCluster } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import { callOptions, readOrNull } from './_util.ts';
import { memberHost } from './build-services.ts';
import type { KubeClients, KubeContext } from './context.ts';
import { authEnabled, tlsSources, type TLSSecretSource } from './tls-sources.ts';
import { clusterTrustDigest } from './trust.ts';

/** An extended key usage etcd needs of a certificate. */
export type KeyUsage = 'serverAuth' | 'clientAuth';

const USAGE_OID: Record<KeyUsage, string> = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' };
const ANY_USAGE_OID = '2.5.29.37.0';

/** One Secret spec.tls names, and what its certificate is used for. */
export interface TLSSecretUse {
  readonly namespace: string;
  readonly name: string;
  /** The field that names it, such as spec.tls.peer.secretRef, or the issuerRef it is issued from. */
  readonly field: string;
  /** The cert-manager Certificate that writes it, when the operator made one. */
  readonly certificate?: string;
  /** DNS names tls.crt must cover. */
  readonly hosts: readonly string[];
  /** Extended key usages tls.crt must allow (a certificate without that extension allows all). */
  readonly usages: readonly KeyUsage[];
  /** The subject's common name tls.crt must have (the operator's, with etcd auth: its user name). */
  readonly commonName?: string;
}

/** The PEM contents of a TLS Secret. */
export interface TLSFiles {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
}

/** The Secret's files, or what is wrong with it in words that name no secret byte. */
export function checkTLSSecret(
  secret: V1Secret | null,
  use: TLSSecretUse,
  now: number,
): { readonly files: TLSFiles } | { readonly problem: string } {
  const what = `Secret ${use.namespace}/${use.name} (${use.certificate ? `Certificate ${use.certificate} from ${use.field}` : use.field})`;
  if (!secret)
    return {
      problem: use.certificate
        ? `${what} does not exist yet: cert-manager has not issued it (kubectl describe certificate -n ${use.namespace} ${use.certificate})`
        : `${what} does not exist`,
    };
  const data = secret.data ?? {};
  const missing = TLS_SECRET_KEYS.filter((k) => !data[k]);
  if (missing.length > 0) return { problem: `${what} has no ${missing.join(', ')}` };
  const [cert, key, ca] = TLS_SECRET_KEYS.map((k) => Buffer.from(data[k] ?? '', 'base64'));
  const files = { cert: cert!, key: key!, ca: ca! };
  const problem = certificateProblem(files, use, now);
  return problem ? { problem: `${what}: ${problem}` } : { files };
}

function certificateProblem(files: TLSFiles, use: TLSSecretUse, now: number): string | null {
  const parsed = <T>(f: () => T): T | null => {
    try {
      return f();
    } catch {
      return null;
    }
  };
  const cert = parsed(() => new X509Certificate(files.cert));
  if (!cert) return 'tls.crt is not a PEM certificate';
  if (!parsed(() => new X509Certificate(files.ca))) return 'ca.crt is not a PEM certificate';
  const key = parsed(() => createPrivateKey(files.key));
  if (!key) return 'tls.key is not an unencrypted PEM private key';
  if (!cert.checkPrivateKey(key)) return 'tls.key is not the private key of tls.crt';
  if (now < Date.parse(cert.validFrom)) return `tls.crt is not valid before ${cert.validFrom}`;
  if (now > Date.parse(cert.validTo)) return `tls.crt expired at ${cert.validTo}`;
  const uncovered = use.hosts.filter((h) => cert.checkHost(h) === undefined);
  if (uncovered.length > 0)
    return `tls.crt does not cover ${uncovered.join(', ')} (it covers ${cert.subjectAltName ?? 'no subject alternative name'})`;
  const allowed = cert.keyUsage;
  const lacking = allowed?.includes(ANY_USAGE_OID)
    ? []
    : use.usages.filter((u) => allowed && !allowed.includes(USAGE_OID[u]));
  if (lacking.length > 0) return `tls.crt does not allow ${lacking.join(' and ')} (extended key usage)`;
  const cn = commonNameOf(cert.subject);
  if (use.commonName !== undefined && cn !== use.commonName)
    return `tls.crt has the common name ${cn ?? '(none)'}, not ${use.commonName}: with spec.auth.enabled the operator is etcd's user ${use.commonName} by its certificate's common name`;
  return null;
}

/**
 * The common name in an X.509 subject as node:crypto prints it (`CN=root` on a line of its own).
 * An empty subject, as cert-manager issues a Certificate without commonName, is undefined there.
 */
const commonNameOf = (subject: string | undefined): string | undefined =>
  subject
    ?.split('\n')
    .find((l) => l.startsWith('CN='))
    ?.slice(3);

/** A use of the Secret `source` names. */
function useOf(cluster: EtcdCluster, source: TLSSecretSource, hosts: string[], usages: KeyUsage[]): TLSSecretUse {
  return {
    namespace: cluster.metadata.namespace ?? '',
    name: source.secret,
    field: source.field,
    ...(source.certificate ? { certificate: source.certificate } : {}),
    hosts,
    usages,
  };
}

/** The Secrets a member of `cluster` named `member` is built on, and what each is used for. */
export function memberTLSUses(cluster: EtcdCluster, member: string): TLSSecretUse[] {
  const namespace = cluster.metadata.namespace ?? '';
  const hosts = [memberHost({ namespace, name: cluster.metadata.name ?? '' }, member)];
  const both: KeyUsage[] = ['serverAuth', 'clientAuth'];
  const { client, peer, operator } = tlsSources(cluster);
  return [
    ...(client ? [useOf(cluster, client, hosts, both)] : []),
    ...(operator ? [operatorTLSUse(cluster)!] : []),
    ...(peer ? [useOf(cluster, peer, hosts, both)] : []),
  ];
}

/** The operator's client certificate of a cluster with client TLS (common name root with auth); undefined without. */
export function operatorTLSUse(cluster: EtcdCluster): TLSSecretUse | undefined {
  const operator = tlsSources(cluster).operator;
  if (!operator) return undefined;
  const use = useOf(cluster, operator, [], ['clientAuth']);
  return authEnabled(cluster) ? { ...use, commonName: ROOT_USER } : use;
}

/** Gets a Secret by name (the only access to Secrets the operator has); null when it does not exist. */
export function getSecret(
  kube: Pick<KubeClients, 'core'>,
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<V1Secret | null> {
  return readOrNull(ERR.TLS_SECRET, `reading Secret ${namespace}/${name}`, () =>
    kube.core.readNamespacedSecret({ name, namespace }, callOptions(signal)),
  );
}

/**
 * Checks every Secret a member of `cluster` would be built on; throws ERR_TLS_SECRET naming each
 * problem, so no member is made that could not start. Retryable: the fix is a Secret the
 * operator cannot watch, so the next try is what sees it. Returns the CA digest of the client and
 * peer Secrets as read (trust.ts); undefined without TLS.
 */
export async function requireMemberTLS(
  ctx: KubeContext,
  cluster: EtcdCluster,
  member: string,
): Promise<string | undefined> {
  const uses = memberTLSUses(cluster, member);
  const problems: string[] = [];
  const cas = new Map<string, Buffer>();
  for (const use of uses) {
    const checked = checkTLSSecret(await getSecret(ctx.kube, use.namespace, use.name, ctx.signal), use, Date.now());
    if ('problem' in checked) problems.push(checked.problem);
    else cas.set(use.name, checked.files.ca);
  }
  if (problems.length > 0)
    throw new EffectError(ERR.TLS_SECRET, `member ${member} cannot be started: ${problems.join('; ')}`);
  return clusterTrustDigest(cluster, (secret) => cas.get(secret)) ?? undefined;
}
