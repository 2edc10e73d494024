/** Runs the repo's build.sh and other command-line tools the control plane needs. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ToolError } from './errors.ts';

const buildScript = path.join(import.meta.dirname, '..', 'tools', 'build.sh');
const cache = new Map<string, Promise<string>>();

/** The Kubernetes release of the control plane and the nodes' kubelet (build.sh's K8S_VERSION). */
export const KUBERNETES_VERSION = 'v1.37.2';

/** The modules localcluster/tools/<wrapper>/go.mod requires, by path, with their versions. */
export function wrapperRequires(wrapper: string): Map<string, string> {
  const goMod = readFileSync(path.join(import.meta.dirname, '..', 'tools', wrapper, 'go.mod'), 'utf8');
  const requires = new Map<string, string>();
  for (const line of goMod.split('\n')) {
    const [, module, version] = /^(?:require |\t)(\S+) (v\S+)(?: \/\/ indirect)?$/.exec(line) ?? [];
    if (module && version) requires.set(module, version);
  }
  return requires;
}

/**
 * The release of `module` that the wrapper module localcluster/tools/<wrapper>/go.mod requires, the
 * one build.sh builds (e.g. `v1.21.2` of github.com/cert-manager/cert-manager in cert-manager/).
 */
export function pinnedRelease(wrapper: string, module: string): string {
  const pinned = wrapperRequires(wrapper).get(module);
  if (!pinned) throw new Error(`localcluster/tools/${wrapper}/go.mod does not require a release of ${module}`);
  return pinned;
}

/** The path of a pinned binary (kube-apiserver, kube-controller-manager, kubectl, etcd...), built once. */
export function binary(tool: string, version?: string): Promise<string> {
  const key = `${tool}@${version ?? ''}`;
  let found = cache.get(key);
  if (!found) {
    found = run(buildScript, version ? [tool, version] : [tool], 1_800_000).then((out) => out.trim());
    // A failed lookup is not remembered, so a later call can retry (after Go finishes building, say).
    found.catch(() => cache.delete(key));
    cache.set(key, found);
  }
  return found;
}

/** Runs a command to completion and returns its stdout; throws a ToolError with its stderr otherwise. */
export function run(file: string, args: readonly string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      const why = missing ? 'not found on PATH' : `failed: ${stderr.trim() || err.message}`;
      reject(new ToolError(path.basename(file), `${[file, ...args].join(' ')} ${why}`, { cause: err }));
    });
  });
}
