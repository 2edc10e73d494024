/**
 * The range Services get their ClusterIPs from: the network part's SERVICE_CIDR, recorded in
 * dir/service-range. A dir made for the loopback Pod network (removed) recorded a 127.x range,
 * which a Pod in its own network namespace would read as its own loopback: it is refused.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SERVICE_CIDR } from '../network/podNetwork.ts';
import { NoServiceRangeError } from './errors.ts';

/** A /16 for ClusterIPs, and the `kubernetes` Service's address in it. */
export interface ServiceRange {
  /** e.g. 10.96.0.0/16 */
  readonly cidr: string;
  /** The first address of the range, e.g. 10.96.0.1. */
  readonly kubernetesServiceIP: string;
}

/** SERVICE_CIDR, written to the dir on first use; throws when the dir recorded another range. */
export async function chooseServiceRange(dir: string): Promise<ServiceRange> {
  const file = path.join(dir, 'service-range');
  const recorded = existsSync(file) ? (await readFile(file, 'utf8')).trim() : undefined;
  // A dir whose etcd predates the file has its Services in the loopback range fixed then.
  const before = recorded ?? (existsSync(path.join(dir, 'etcd')) ? '127.96.0.0/16' : SERVICE_CIDR);
  if (before !== SERVICE_CIDR)
    throw new NoServiceRangeError(
      `${dir} holds a cluster whose Services are in ${before}, made for the removed loopback Pod network; ` +
        `remove the dir to start a new cluster there (Services now get ${SERVICE_CIDR})`,
    );
  if (!recorded) await writeFile(file, SERVICE_CIDR + '\n');
  return rangeOf(SERVICE_CIDR);
}

function rangeOf(cidr: string): ServiceRange {
  const [a, b] = cidr.split('.');
  return { cidr, kubernetesServiceIP: `${a}.${b}.0.1` };
}
