/** Runs the pinned kubectl against a kubeconfig. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Kubectl, KubectlResult } from '../types.ts';
import { binary } from './tools.ts';

/** The pinned kubectl's path (built once by build.sh). */
export function kubectlPath(): Promise<string> {
  return binary('kubectl');
}

/** A Kubectl bound to kubeconfigPath; a non-zero exit is returned, not thrown. */
export function kubectlFor(kubeconfigPath: string, bin?: string): Kubectl {
  return async (args, opts) =>
    runKubectl(bin ?? (await kubectlPath()), [...kubeconfigArgs(kubeconfigPath), ...args], opts?.input);
}

/**
 * `--kubeconfig` and a discovery cache beside it: the default, ~/.kube/cache, would collect a
 * folder per test cluster's port and could serve one cluster's API list to the next on that port.
 */
export function kubeconfigArgs(kubeconfigPath: string): string[] {
  return ['--kubeconfig', kubeconfigPath, '--cache-dir', path.join(path.dirname(kubeconfigPath), '.kubectl-cache')];
}

/** Runs kubectl with args (stdin from input) and collects its output. */
export function runKubectl(bin: string, args: readonly string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ stdout, stderr, code: code ?? (signal ? 128 : 1) }));
    child.stdin.on('error', () => undefined); // kubectl may exit before reading all of stdin
    child.stdin.end(input ?? '');
  });
}
