/**
 * Measures a Service's DNAT (nftables, what the network does for every ClusterIP) against a
 * direct connection to the Pod and prints JSON. A benchmark, not a test; needs root, starts no
 * cluster:
 *
 *   node localcluster/network/bench.ts [connections] [round trips]
 *
 * One Pod namespace with an echo server on 0.0.0.0:7000; per path, the rate of new connections
 * (connect, one byte there and back, close; one at a time and 16 at once) and the round-trip
 * time of one byte on one open connection.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { BRIDGE, TABLE_PREFIX } from './podNetwork.ts';
import { BRIDGE_TABLE } from './bridge.ts';
import { ip, links } from './ip.ts';
import { nft } from './nft.ts';
import { PodNetns } from './podNetns.ts';
import { removeServiceRules, renderServiceRules } from './serviceRules.ts';

const connections = Number(process.argv[2] ?? 2000);
const roundTrips = Number(process.argv[3] ?? 5000);
const POD = { ip: '10.244.252.1', port: 7000 };
const CLUSTER_IP = { ip: '10.96.255.250', port: 80 };
const TABLE = `${TABLE_PREFIX}svc_bench`;

/** One byte there and back on a new connection. */
function once(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = net.connect({ host, port }, () => c.write('x'));
    c.once('data', () => {
      c.destroy();
      resolve();
    });
    c.once('error', reject);
  });
}

async function rate(host: string, port: number, parallel: number): Promise<number> {
  let left = connections;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (left-- > 0) await once(host, port);
    }),
  );
  return Math.round(connections / ((performance.now() - started) / 1000));
}

async function latency(host: string, port: number): Promise<{ medianUs: number; p99Us: number }> {
  const c = net.connect({ host, port });
  await new Promise((r) => c.once('connect', r));
  c.setNoDelay(true);
  const samples: number[] = [];
  for (let i = 0; i < roundTrips; i++) {
    const t = performance.now();
    await new Promise<void>((resolve) => {
      c.once('data', () => resolve());
      c.write('x');
    });
    samples.push((performance.now() - t) * 1000);
  }
  c.destroy();
  samples.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(samples[Math.floor(q * (samples.length - 1))] ?? 0);
  return { medianUs: at(0.5), p99Us: at(0.99) };
}

async function measure(host: string, port: number): Promise<Record<string, unknown>> {
  await latency(host, port); // warm up
  return {
    connectionsPerSecond: await rate(host, port, 1),
    connectionsPerSecond16: await rate(host, port, 16),
    roundTrip: await latency(host, port),
  };
}

const bridgeWasThere = (await links()).some((l) => l.name === BRIDGE);
const pods = new PodNetns(`bench-${process.pid}`, () => undefined);
const uid = `bench-${process.pid}`;
const netns = await pods.attach(uid, POD.ip);
const echo = `require('node:net').createServer((s) => { s.setNoDelay(true); s.pipe(s); }).listen(${POD.port}, '0.0.0.0', () => console.log('up'))`;
const server = spawn('nsenter', [`--net=${netns}`, '--', process.execPath, '-e', echo], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  await new Promise((r) => server.stdout.once('data', r));
  await nft(renderServiceRules(TABLE, [{ service: 'bench', ...CLUSTER_IP, targets: [POD] }]));
  const result = {
    connections,
    roundTrips,
    direct: await measure(POD.ip, POD.port),
    dnat: await measure(CLUSTER_IP.ip, CLUSTER_IP.port),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  server.kill('SIGKILL');
  await nft(removeServiceRules(TABLE)).catch(() => undefined);
  await pods.detach(uid);
  if (!bridgeWasThere) {
    await ip(['link', 'del', BRIDGE]).catch(() => undefined);
    await nft(`table ip ${BRIDGE_TABLE} {}\ndelete table ip ${BRIDGE_TABLE}\n`).catch(() => undefined);
  }
}
