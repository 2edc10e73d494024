import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { BRIDGE_TABLE } from './bridge.ts';
import { ip, links, netnsNames } from './ip.ts';
import { nft } from './nft.ts';
import { PodNetns } from './podNetns.ts';
import { BRIDGE } from './podNetwork.ts';

const root = process.getuid?.() === 0;
const children: ChildProcess[] = [];

/** Greets on 0.0.0.0:port inside the namespace; resolves once it listens. */
function serveIn(netns: string, port: number, greeting: string): Promise<void> {
  const script = `require('node:net').createServer((s) => s.end(${JSON.stringify(greeting)})).listen(${port}, '0.0.0.0', () => console.log('up'))`;
  const child = spawn('nsenter', [`--net=${netns}`, '--', process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve) => child.stdout.once('data', () => resolve()));
}

function greeting(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const c = net.connect({ host, port, timeout: 2000 });
    let got = '';
    c.on('data', (d) => (got += d.toString()));
    c.on('end', () => resolve(got));
    c.on('timeout', () => (c.destroy(), resolve('timeout')));
    c.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

describe.runIf(root)('Pod network namespaces', () => {
  const pods = new PodNetns(`unit-${process.pid}`, () => undefined);
  const uids = [`a-${process.pid}`, `b-${process.pid}`];
  let bridgeWasThere = true;

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const uid of uids) await pods.detach(uid);
    if (!bridgeWasThere) {
      await ip(['link', 'del', BRIDGE]).catch(() => undefined);
      await nft(`table ip ${BRIDGE_TABLE} {}\ndelete table ip ${BRIDGE_TABLE}\n`).catch(() => undefined);
    }
  });

  it('two Pods listen on 0.0.0.0 at the same port, each reached from the host at its own address, and go without a trace', async () => {
    bridgeWasThere = (await links()).some((l) => l.name === BRIDGE);
    const addresses = ['10.244.254.11', '10.244.254.12'];
    const paths = [await pods.attach(uids[0]!, addresses[0]!), await pods.attach(uids[1]!, addresses[1]!)];
    await serveIn(paths[0]!, 7000, 'pod a');
    await serveIn(paths[1]!, 7000, 'pod b');
    expect(await greeting(addresses[0]!, 7000)).toBe('pod a');
    expect(await greeting(addresses[1]!, 7000)).toBe('pod b');
    for (const c of children.splice(0)) c.kill('SIGKILL');
    for (const uid of uids) await pods.detach(uid);
    const left = await netnsNames();
    expect(uids.filter((uid) => left.includes(pods.name(uid)))).toEqual([]);
  });
});
