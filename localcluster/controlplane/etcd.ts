/** The etcd that stores the API server's objects: one member, loopback only, data in dir/etcd. */
import path from 'node:path';
import type { Log } from '../types.ts';
import type { Proc } from './process.ts';
import { startProcess, waitReady } from './process.ts';
import { binary } from './tools.ts';

/** etcd version the control plane stores its objects in. */
export const controlPlaneEtcdVersion = '3.6.16';

/** Where the API server's etcd runs. */
export interface EtcdOptions {
  readonly dir: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly log?: Log;
}

/** Starts etcd and waits until /health says true; the data dir is reused on restart. */
export async function startEtcd(opts: EtcdOptions): Promise<{ proc: Proc; url: string }> {
  const url = `http://127.0.0.1:${opts.clientPort}`;
  const peer = `http://127.0.0.1:${opts.peerPort}`;
  const proc = await startProcess({
    name: 'etcd',
    bin: await binary('etcd', controlPlaneEtcdVersion),
    dir: opts.dir,
    log: opts.log,
    // Plain HTTP: nothing but the API server on this machine's loopback talks to it.
    args: [
      '--name=controlplane',
      `--data-dir=${path.join(opts.dir, 'etcd')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=controlplane=${peer}`,
      '--initial-cluster-state=new',
      '--log-level=warn',
    ],
  });
  await waitReady(proc, () => etcdHealthy(url), 60_000);
  return { proc, url };
}

async function etcdHealthy(url: string): Promise<string | true> {
  const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
  const body = await res.text();
  return res.ok && (JSON.parse(body) as { health?: string }).health === 'true' ? true : `/health: ${body}`;
}
