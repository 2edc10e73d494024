/** Checks that this machine can run the node: root (for namespaces and mounts) and the tools it runs. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NodeError } from './errors.ts';

const run = promisify(execFile);

/** The tools the node runs, and the Debian package each comes from. */
const tools: Readonly<Record<string, string>> = {
  unshare: 'util-linux',
  setpriv: 'util-linux',
  nsenter: 'util-linux',
  mount: 'mount',
  umount: 'mount',
  openssl: 'openssl',
  script: 'bsdutils', // kubectl exec -t: a pseudo-terminal
  stty: 'coreutils', // and its size
  ip: 'iproute2', // each Pod's network namespace, veth and routes
};

/** Throws a NodeError that says what is missing: root, or a tool with its Debian package. */
export async function checkHost(): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new NodeError(
      'ERR_NODE_NOT_ROOT',
      'the local node must run as root: it gives every Pod its own network namespace and every container its own mount namespace and bind mounts (run the tests as root, e.g. in a VM or CI container)',
    );
  }
  for (const [tool, pkg] of Object.entries(tools)) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      throw new NodeError(
        'ERR_NODE_MISSING_TOOL',
        `the local node needs ${tool} on PATH (Debian package ${pkg}: apt-get install -y ${pkg})`,
      );
    }
  }
}
