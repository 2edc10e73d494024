/** Runs iproute2's `ip` (and writes the sysctls the Pod network needs), with errors that say what failed. */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';

const SBIN = '/usr/sbin:/sbin:/usr/bin:/bin';

/** `ip` refused a command, or a sysctl could not be written. */
export class PodNetworkError extends Error {
  readonly code: string;
  override readonly name = 'PodNetworkError';
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

function env(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${process.env['PATH'] ?? ''}:${SBIN}` };
}

/** Runs `ip args...` and returns its stdout. */
export function ip(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ip', args, { env: env(), maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err)
        reject(new PodNetworkError('ERR_POD_NETWORK_IP', `ip ${args.join(' ')}: ${stderr.trim()}`, { cause: err }));
      else resolve(stdout);
    });
  });
}

/**
 * Runs several `ip` commands in one process (`ip -batch`), inside a network namespace when
 * named; with `force`, every command runs even after one fails (and the failures are ignored).
 */
export function ipBatch(commands: readonly string[], netns?: string, force = false): Promise<void> {
  const args = [...(netns ? ['-n', netns] : []), ...(force ? ['-force'] : []), '-batch', '-'];
  return new Promise((resolve, reject) => {
    const child = execFile('ip', args, { env: env() }, (err, _stdout, stderr) => {
      if (err && !force) {
        const where = netns ? ` in ${netns}` : '';
        reject(new PodNetworkError('ERR_POD_NETWORK_IP', `ip -batch${where}: ${stderr.trim()}`, { cause: err }));
      } else resolve();
    });
    child.stdin?.end(commands.join('\n') + '\n');
  });
}

/** Sets an IPv4 sysctl of one interface (`net.ipv4.conf.<dev>.<key>`). */
export async function interfaceSysctl(dev: string, key: string, value: string): Promise<void> {
  await writeFile(`/proc/sys/net/ipv4/conf/${dev}/${key}`, value).catch((err: unknown) => {
    throw new PodNetworkError('ERR_POD_NETWORK_SYSCTL', `net.ipv4.conf.${dev}.${key}=${value}`, { cause: err });
  });
}

/** The names of the links of this namespace, with their kind and alias. */
export async function links(): Promise<{ name: string; kind: string; alias: string }[]> {
  const out = JSON.parse(await ip(['-j', '-d', 'link', 'show'])) as {
    ifname: string;
    ifalias?: string;
    linkinfo?: { info_kind?: string };
  }[];
  return out.map((l) => ({ name: l.ifname, kind: l.linkinfo?.info_kind ?? '', alias: l.ifalias ?? '' }));
}

/** The named network namespaces (`ip netns list`). */
export async function netnsNames(): Promise<string[]> {
  const text = await ip(['netns', 'list']);
  return text
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter(Boolean);
}
