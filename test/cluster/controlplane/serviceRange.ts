/**
 * The range Services get their ClusterIPs from, chosen once per dir: the network part's
 * SERVICE_CIDR when Pods have their own network namespaces (the default), else a loopback /16.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { podNetworkMode, SERVICE_CIDR } from '../network/podNetwork.ts';
import { NoServiceRangeError } from './errors.ts';

/** A /16 for ClusterIPs, and the `kubernetes` Service's address in it. */
export interface ServiceRange {
  /** e.g. 127.96.0.0/16 */
  readonly cidr: string;
  /** The first address of the range, e.g. 127.96.0.1. */
  readonly kubernetesServiceIP: string;
}

/** Second octets tried in order: 127.96.0.0/16 first, up to 127.127.0.0/16. */
const firstOctet = 96;
const lastOctet = 127;

/**
 * The range this dir used before, else the first one whose `kubernetes` address has no
 * listener: two local clusters on one machine (`make cluster` and a test run, say) would
 * otherwise both proxy 127.96.0.1:443 and one of them would lose.
 */
export async function chooseServiceRange(dir: string): Promise<ServiceRange> {
  const file = path.join(dir, 'service-range');
  if (existsSync(file)) return rangeOf((await readFile(file, 'utf8')).trim());
  // A dir whose etcd predates this file has its Services in the range that was fixed then.
  const chosen = existsSync(path.join(dir, 'etcd'))
    ? rangeOf(`127.${firstOctet}.0.0/16`)
    : podNetworkMode() === 'netns'
      ? rangeOf(SERVICE_CIDR)
      : await firstUnused();
  await writeFile(file, chosen.cidr + '\n');
  return chosen;
}

async function firstUnused(): Promise<ServiceRange> {
  for (let octet = firstOctet; octet <= lastOctet; octet++) {
    const range = rangeOf(`127.${octet}.0.0/16`);
    if (!(await listening(range.kubernetesServiceIP, 443))) return range;
  }
  throw new NoServiceRangeError(
    `every Service range from 127.${firstOctet}.0.0/16 to 127.${lastOctet}.0.0/16 is in use`,
  );
}

function rangeOf(cidr: string): ServiceRange {
  const [a, b] = cidr.split('.');
  return { cidr, kubernetesServiceIP: `${a}.${b}.0.1` };
}

// A connect, not a bind: binding port 443 needs root, asking whether someone listens does not.
function listening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 1_000 });
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(true));
    socket.once('error', () => done(false));
  });
}
