import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { BRIDGE_TABLE } from './bridge.ts';
import { ip, links, netnsNames } from './ip.ts';
import { nft } from './nft.ts';
import { PodNetns } from './podNetns.ts';
import { BRIDGE, TABLE_PREFIX } from './podNetwork.ts';
import { removeServiceRules, renderServiceRules } from './serviceRules.ts';

const root = process.getuid?.() === 0;
const children: ChildProcess[] = [];

/** What a dial from inside the namespace got: the greeting, or the error code. */
function greetingFrom(netns: string, host: string, port: number): Promise<string> {
  const script = `const c = require('node:net').connect({ host: ${JSON.stringify(host)}, port: ${port}, timeout: 2000 });
let got = ''; c.on('data', (d) => (got += d)); c.on('end', () => console.log(got));
c.on('timeout', () => { console.log('timeout'); c.destroy(); }); c.on('error', (e) => console.log(e.code));`;
  const child = spawn('nsenter', [`--net=${netns}`, '--', process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.once('exit', () => resolve(out.trim())));
}

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
  const uids = [`a-${process.pid}`, `b-${process.pid}`, `c-${process.pid}`];
  const table = `${TABLE_PREFIX}svc_unit_${process.pid}`;
  let bridgeWasThere = true;

  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    for (const uid of uids) await pods.detach(uid);
    await nft(removeServiceRules(table)).catch(() => undefined);
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

  it("a Pod reaches a program on the host's loopback only through a Service's DNAT (as the API server)", async () => {
    const host = net.createServer((c) => c.end('host loopback'));
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    const port = (host.address() as net.AddressInfo).port;
    try {
      const netns = await pods.attach(uids[2]!, '10.244.254.13');
      await nft(
        renderServiceRules(table, [
          { service: 'unit', ip: '10.96.255.251', port: 443, targets: [{ ip: '127.0.0.1', port }] },
        ]),
      );
      expect(await greetingFrom(netns, '10.96.255.251', 443)).toBe('host loopback');
      // The Pod's own 127.0.0.1 is not the host's.
      expect(await greetingFrom(netns, '127.0.0.1', port)).toBe('ECONNREFUSED');
      // A Service address no rule serves is refused at once.
      expect(await greetingFrom(netns, '10.96.255.252', 443)).toBe('ECONNREFUSED');
    } finally {
      host.close();
    }
  });
});
