/**
 * The hosts file Pods see at /etc/hosts: what the cluster DNS would answer, as lines.
 * Rendering is pure; writing rewrites the file in place because Pods bind-mount the file
 * itself, and a rename would leave them holding the old inode.
 */
import { open, readFile } from 'node:fs/promises';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { byName, clusterAddress, endpointPods, isHeadless, isRunning } from './selection.ts';

const HEADER = ['127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback'];

/** What the hosts file is made from. */
export interface HostsInput {
  readonly pods: readonly V1Pod[];
  readonly services: readonly V1Service[];
}

/** Both names Kubernetes DNS gives a name under a namespace: `x.ns.kind` and `x.ns.kind.cluster.local`. */
function names(name: string, namespace: string, kind: 'svc' | 'pod'): string[] {
  return [`${name}.${namespace}.${kind}`, `${name}.${namespace}.${kind}.cluster.local`];
}

/** The hosts file text for these Pods and Services. */
export function renderHosts(input: HostsInput): string {
  const lines = [...HEADER];
  const pods = input.pods.filter(isRunning).sort(byName);
  const services = [...input.services].sort(byName);
  for (const pod of pods) {
    const ns = pod.metadata?.namespace ?? 'default';
    const ip = pod.status?.podIP ?? '';
    lines.push(`${ip}\t${names(ip.replaceAll('.', '-'), ns, 'pod').join(' ')}`);
  }
  for (const service of services) {
    const ns = service.metadata?.namespace ?? 'default';
    const name = service.metadata?.name ?? '';
    if (!isHeadless(service)) {
      const address = clusterAddress(service);
      if (address) lines.push(`${address}\t${names(name, ns, 'svc').join(' ')}`);
      continue;
    }
    // A headless Service answers with its Pods, and names `<hostname>.<service>` for Pods
    // whose spec.subdomain is this Service.
    for (const pod of endpointPods(service, input.pods).sort(byName)) {
      const ip = pod.status?.podIP ?? '';
      const hostname = pod.spec?.subdomain === name ? pod.spec.hostname : undefined;
      const own = hostname ? names(`${hostname}.${name}`, ns, 'svc') : [];
      lines.push(`${ip}\t${[...own, ...names(name, ns, 'svc')].join(' ')}`);
    }
  }
  return lines.join('\n') + '\n';
}

/**
 * Lays `next` out over `current` so that every line both hold keeps its bytes and its offset:
 * a line that goes becomes a comment of the same length, a new one goes at the end, so the file
 * only grows. A resolver reading the file while it is rewritten (glibc reads
 * it a buffer at a time) then finds every line that stayed, whichever parts it read before and
 * after the write; with the lines sorted anew each time, one shifted past it and a name that was
 * there all along was not found (EAI_AGAIN with a dozen Pods). Once the comments outweigh the
 * lines, the file is written compact, which moves lines (rarely).
 */
export function layOver(current: string, next: string): string {
  const want = next.split('\n').filter((l) => l !== '');
  const left = new Map<string, number>();
  for (const line of want) left.set(line, (left.get(line) ?? 0) + 1);
  const take = (line: string): boolean => {
    const n = left.get(line) ?? 0;
    if (n > 0) left.set(line, n - 1);
    return n > 0;
  };
  const out: string[] = [];
  let dead = 0;
  for (const line of current.split('\n').slice(0, current.endsWith('\n') ? -1 : undefined)) {
    if (!line.startsWith('#') && take(line)) out.push(line);
    else {
      out.push(line === '' ? '' : '#'.padEnd(line.length, ' '));
      dead += line.length + 1;
    }
  }
  for (const line of want) if (take(line)) out.push(line);
  const text = out.join('\n') + '\n';
  return dead > text.length - dead ? want.join('\n') + '\n' : text;
}

/**
 * Rewrites the file in place (same inode) when its content differs, its lines laid over the
 * old ones (layOver); tells whether it wrote.
 */
export async function writeInPlace(file: string, content: string): Promise<boolean> {
  const current = await readFile(file, 'utf8').catch(() => undefined);
  const laid = current === undefined ? content : layOver(current, content);
  if (current === laid) return false;
  // Overwrite then cut to length, rather than truncate then write, so a resolver reading
  // at that moment never finds the file empty.
  const handle = await open(file, current === undefined ? 'w' : 'r+');
  try {
    const bytes = Buffer.from(laid);
    await handle.write(bytes, 0, bytes.length, 0);
    await handle.truncate(bytes.length);
  } finally {
    await handle.close();
  }
  return true;
}
