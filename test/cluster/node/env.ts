/** Container environment like the kubelet builds it: downward API, Secret and ConfigMap keys, $(VAR). */
import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node';
import { NodeError } from './errors.ts';

/** Reads a key of a Secret or ConfigMap; undefined when the object or key is missing. */
export type KeyLookup = (
  kind: 'Secret' | 'ConfigMap',
  namespace: string,
  name: string,
) => Promise<Record<string, string> | undefined>;

/** What the environment is built from besides the Pod itself. */
export interface EnvContext {
  readonly podIP: string;
  readonly hostIP: string;
  readonly apiHost: string;
  readonly apiPort: string;
  readonly lookup: KeyLookup;
}

/**
 * Expands `$(VAR)` from vars like the kubelet: `$$` is a literal `$`, and a reference to an
 * undefined variable is left as written.
 */
export function expandVars(input: string, vars: Readonly<Record<string, string>>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c !== '$' || i + 1 >= input.length) {
      out += c;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      out += Object.hasOwn(vars, name) ? vars[name] : `$(${name})`;
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

/** The value of a downward API field path of the Pod (as the kubelet resolves it). */
export function fieldValue(pod: V1Pod, path: string, ctx: Pick<EnvContext, 'podIP' | 'hostIP'>): string {
  const m = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (m) return (m[1] === 'labels' ? pod.metadata?.labels : pod.metadata?.annotations)?.[m[2]!] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata?.name ?? '';
    case 'metadata.namespace':
      return pod.metadata?.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata?.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs':
      return ctx.podIP;
    case 'status.hostIP':
    case 'status.hostIPs':
      return ctx.hostIP;
    default:
      throw new NodeError('ERR_CONFIG', `unsupported fieldRef ${path}`);
  }
}

/** Builds a container's environment (without the host's), in the order a kubelet does. */
export async function containerEnv(
  pod: V1Pod,
  container: V1Container,
  ctx: EnvContext,
): Promise<Record<string, string>> {
  const ns = pod.metadata?.namespace ?? 'default';
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOSTNAME: pod.spec?.hostname ?? pod.metadata?.name ?? '',
    KUBERNETES_SERVICE_HOST: ctx.apiHost,
    KUBERNETES_SERVICE_PORT: ctx.apiPort,
    KUBERNETES_SERVICE_PORT_HTTPS: ctx.apiPort,
    KUBERNETES_PORT: `tcp://${ctx.apiHost}:${ctx.apiPort}`,
    // As the container runtime sets it: the user's home from the image's passwd, else /. The
    // images here have no passwd, so root gets /root and any other user / (Node's os.homedir(),
    // which the AWS SDK calls, throws for a user without either).
    HOME: (container.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser ?? 0) === 0 ? '/root' : '/',
  };
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const data = await ctx.lookup(from.configMapRef ? 'ConfigMap' : 'Secret', ns, ref.name ?? '');
    if (!data && !ref.optional)
      throw new NodeError('ERR_CONFIG', `${from.configMapRef ? 'configmap' : 'secret'} "${ref.name}" not found`);
    for (const [k, v] of Object.entries(data ?? {})) env[(from.prefix ?? '') + k] = v;
  }
  for (const v of container.env ?? []) {
    const value = await envValue(pod, v, env, ctx);
    if (value !== undefined) env[v.name] = value;
  }
  return env;
}

async function envValue(
  pod: V1Pod,
  v: V1EnvVar,
  env: Record<string, string>,
  ctx: EnvContext,
): Promise<string | undefined> {
  if (v.value !== undefined) return expandVars(v.value, env);
  const from = v.valueFrom;
  if (!from) return '';
  if (from.fieldRef) return fieldValue(pod, from.fieldRef.fieldPath, ctx);
  const ref = from.secretKeyRef ?? from.configMapKeyRef;
  if (ref) {
    const kind = from.secretKeyRef ? 'Secret' : 'ConfigMap';
    const data = await ctx.lookup(kind, pod.metadata?.namespace ?? 'default', ref.name ?? '');
    const value = data?.[ref.key];
    if (value === undefined && !ref.optional) {
      throw new NodeError(
        'ERR_CONFIG',
        `couldn't find key ${ref.key} in ${kind} ${pod.metadata?.namespace}/${ref.name}`,
      );
    }
    return value;
  }
  if (from.resourceFieldRef) {
    const [kind, name] = from.resourceFieldRef.resource.split('.');
    const limits = kind === 'requests' ? container(pod, v)?.resources?.requests : container(pod, v)?.resources?.limits;
    return String(limits?.[name ?? ''] ?? (name === 'cpu' ? '2' : '8Gi'));
  }
  return '';
}

function container(pod: V1Pod, v: V1EnvVar): V1Container | undefined {
  const all = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const name = v.valueFrom?.resourceFieldRef?.containerName;
  return all.find((c) => c.name === name || (!name && c.env?.includes(v)));
}

/** The command line a container runs: its command/args over the image's, with $(VAR) expanded. */
export function commandLine(
  container: V1Container,
  image: { entrypoint: readonly string[]; cmd: readonly string[] },
  env: Record<string, string>,
): string[] {
  const entry = container.command ?? image.entrypoint;
  const args = container.args ?? (container.command ? [] : image.cmd);
  return [...entry, ...args].map((s) => (container.command || container.args ? expandVars(s, env) : s));
}
