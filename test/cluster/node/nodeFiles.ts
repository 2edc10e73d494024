/** What the node keeps in its directory and reads back: container logs, leftover mounts; key lookups. */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { KeyLookup } from './env.ts';
import { NodeError } from './errors.ts';

const run = promisify(execFile);

/** Reads Secret (decoded) and ConfigMap data for environment variables; undefined when missing. */
export function keyLookup(core: CoreV1Api): KeyLookup {
  return async (kind, namespace, name) => {
    try {
      if (kind === 'ConfigMap') return (await core.readNamespacedConfigMap({ name, namespace })).data ?? {};
      const data = (await core.readNamespacedSecret({ name, namespace })).data ?? {};
      return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  };
}

/** Unmounts Memory emptyDirs a node that died left under its directory. */
export async function unmountLeftovers(podsDir: string): Promise<void> {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '');
  for (const m of mounts.filter((p) => p.startsWith(podsDir + '/')).reverse())
    await run('umount', ['-l', m]).catch(() => undefined);
}

/**
 * A container's output, every run in order (0.log, 1.log...). The Pod's directory is the live
 * worker's, else the newest one of that namespace and name (a deleted Pod's logs stay readable).
 */
export function podLogs(
  liveDir: string | undefined,
  podsDir: string,
  namespace: string,
  pod: string,
  container?: string,
): string {
  const dir = liveDir ?? newestPodDir(podsDir, namespace, pod);
  if (!dir) throw new NodeError('ERR_CONFIG', `no pod ${namespace}/${pod} ran on this node`);
  const meta = join(dir, 'pod.json');
  const name =
    container ??
    (existsSync(meta) ? (JSON.parse(readFileSync(meta, 'utf8')) as { containers: string[] }).containers[0] : undefined);
  const logDir = join(dir, 'containers', name ?? '');
  if (!name || !existsSync(logDir)) return '';
  return readdirSync(logDir)
    .filter((f) => /^\d+\.log$/.test(f))
    .sort((a, b) => parseInt(a) - parseInt(b))
    .map((f) => readFileSync(join(logDir, f), 'utf8'))
    .join('');
}

/** Index of the latest run of a container that left a log in the Pod's directory (-1: none). */
export function latestRun(podDir: string, container: string): number {
  const logDir = join(podDir, 'containers', container);
  if (!existsSync(logDir)) return -1;
  return Math.max(
    -1,
    ...readdirSync(logDir)
      .filter((f) => /^\d+\.log$/.test(f))
      .map((f) => parseInt(f)),
  );
}

/** The newest directory of a Pod of this namespace and name (also after the Pod is gone). */
export function newestPodDir(podsDir: string, namespace: string, pod: string): string | undefined {
  return readdirSync(podsDir)
    .filter((d) => d.startsWith(`${namespace}_${pod}_`))
    .map((d) => join(podsDir, d))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}
