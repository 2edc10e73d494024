/**
 * Real etcd processes for the etcd handler tests: a seed started with `--initial-cluster-state
 * new`, the others with `existing` and the `--initial-cluster` addLearner returned. Everything
 * listens on 127.0.0.1 ports the kernel picks; data lives in a temp dir removed at stop. With
 * `tls`, client (and peer) URLs are https with client certificates required, as spec.tls makes them.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  addLearner,
  EtcdClients,
  promoteLearner,
  type EtcdClientTLS,
  type EtcdContext,
  type EtcdResolver,
} from '../../../effects/etcd/index.ts';
import { EffectError, type ClusterRef } from '../../../effects/types.ts';
import type { Leaf } from './test-pki.ts';

/** The etcd binary of a version, built (or found) by localcluster/tools/build.sh. */
export function etcdBinary(version?: string): string {
  const script = path.join(import.meta.dirname, '..', '..', '..', 'localcluster', 'tools', 'build.sh');
  return execFileSync(script, version ? ['etcd', version] : ['etcd'], { encoding: 'utf8' }).trim();
}

/** The lowest port the kernel hands out to outgoing connections (ip_local_port_range). */
const EPHEMERAL_LOW = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
})();

/** Whether nothing listens on 127.0.0.1:port now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port on 127.0.0.1 that nothing listens on now, below the kernel's ephemeral range: a port
 * the kernel chose (listen on 0) is one it may give the next outgoing connection of any process
 * before etcd binds it, which under a busy suite left a member unable to start.
 */
export async function freePort(): Promise<number> {
  const low = 10_000;
  for (;;) {
    const port = low + Math.floor(Math.random() * (EPHEMERAL_LOW - low));
    if (await bindable(port)) return port;
  }
}

/** TLS for a LocalEtcd: the members' certificate (client and peer), and what clients call with. */
export interface LocalEtcdTLS {
  /** The members' certificate and key, and the CA client and peer certificates must be signed by. */
  readonly member: Leaf;
  /** The certificate the handlers' clients call with. */
  readonly client: EtcdClientTLS;
  /** Peers over TLS too (default true). */
  readonly peer?: boolean;
  /** The name clients check members' certificates against instead of 127.0.0.1 (pod-ip mode). */
  readonly serverName?: string;
}

interface Member {
  readonly clientURL: string;
  readonly peerURL: string;
  /** Plain http, as the members' port 2381: /metrics, /health, /readyz. */
  readonly metricsURL: string;
  proc?: ChildProcess;
}

/** A set of etcd processes on loopback, and the EtcdClients the handlers reach them with. */
export class LocalEtcd {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-effects-'));
  readonly ref: ClusterRef;
  readonly clients: EtcdClients;
  readonly #bin: string;
  /** Flags every member starts with, after the operator's (e.g. `--quota-backend-bytes=16777216`). */
  readonly #flags: readonly string[];
  readonly #members = new Map<string, Member>();
  readonly #tls: LocalEtcdTLS | undefined;
  /** Addresses of the started members (killed ones stay listed, as a Service's DNS names would). */
  readonly resolve: EtcdResolver = () => ({
    endpoints: [...this.#members.values()].filter((m) => m.proc).map((m) => m.clientURL),
    clientURL: (member) => this.#members.get(member)?.clientURL ?? `${this.#scheme(true)}://127.0.0.1:1`,
    ...(this.#tls ? { tls: this.#tls.client } : {}),
    ...(this.#tls?.serverName ? { serverName: () => this.#tls?.serverName } : {}),
  });

  constructor(name: string, version?: string, options: { tls?: LocalEtcdTLS; flags?: readonly string[] } = {}) {
    this.#bin = etcdBinary(version);
    this.#tls = options.tls;
    this.#flags = options.flags ?? [];
    this.ref = { namespace: 'test', name, uid: `uid-${name}` };
    this.clients = new EtcdClients(this.resolve);
  }

  #scheme(client: boolean): 'http' | 'https' {
    const on = client ? this.#tls !== undefined : this.#tls !== undefined && this.#tls.peer !== false;
    return on ? 'https' : 'http';
  }

  /** etcd's TLS flags for the members' certificate on the planes that use it. */
  #tlsFlags(): string[] {
    const t = this.#tls;
    if (!t) return [];
    const m = t.member;
    return [
      ...[`--cert-file=${m.cert}`, `--key-file=${m.key}`, `--trusted-ca-file=${m.ca}`, '--client-cert-auth'],
      ...(t.peer === false
        ? []
        : [
            `--peer-cert-file=${m.cert}`,
            `--peer-key-file=${m.key}`,
            `--peer-trusted-ca-file=${m.ca}`,
            '--peer-client-cert-auth',
          ]),
    ];
  }

  /** A context for one handler call, with a fresh deadline. */
  ctx(timeoutMs = 10_000): EtcdContext {
    const silent = { info() {}, warn() {}, error() {} };
    return { cluster: this.ref, signal: AbortSignal.timeout(timeoutMs), log: silent, etcd: this.clients };
  }

  /** Chooses a member's ports; returns its peer URL (what addLearner is given). */
  async allocate(member: string): Promise<string> {
    const [client, peer, metrics] = [await freePort(), await freePort(), await freePort()];
    this.#members.set(member, {
      clientURL: `${this.#scheme(true)}://127.0.0.1:${client}`,
      peerURL: `${this.#scheme(false)}://127.0.0.1:${peer}`,
      metricsURL: `http://127.0.0.1:${metrics}`,
    });
    return this.peerURL(member);
  }

  /** The plain http metrics and health URL of a member. */
  metricsURL(member: string): string {
    const m = this.#members.get(member);
    if (!m) throw new Error(`no ports allocated for ${member}`);
    return m.metricsURL;
  }

  /** The peer URL chosen for a member. */
  peerURL(member: string): string {
    const m = this.#members.get(member);
    if (!m) throw new Error(`no ports allocated for ${member}`);
    return m.peerURL;
  }

  /** Starts the seed: a one-member cluster. */
  async startSeed(member: string): Promise<void> {
    const peerURL = await this.allocate(member);
    await this.start(member, `${member}=${peerURL}`, 'new');
  }

  /**
   * Starts a member with the given `--initial-cluster` and waits until it answers a status call;
   * `bin` runs another etcd binary than the cluster's (a member restarted on a new version);
   * `extra` flags go last (`--force-new-cluster` for one start).
   */
  async start(
    member: string,
    initialCluster: string,
    state: 'new' | 'existing',
    bin = this.#bin,
    extra: readonly string[] = [],
  ): Promise<void> {
    const m = this.#members.get(member);
    if (!m) throw new Error(`no ports allocated for ${member}`);
    const log = openSync(path.join(this.dir, `${member}.log`), 'a');
    m.proc = spawn(
      bin,
      [
        `--name=${member}`,
        `--data-dir=${path.join(this.dir, member)}`,
        `--listen-client-urls=${m.clientURL}`,
        `--advertise-client-urls=${m.clientURL}`,
        `--listen-peer-urls=${m.peerURL}`,
        `--initial-advertise-peer-urls=${m.peerURL}`,
        `--initial-cluster=${initialCluster}`,
        `--initial-cluster-state=${state}`,
        `--initial-cluster-token=${this.ref.uid}`,
        `--listen-metrics-urls=${m.metricsURL}`,
        ...this.#tlsFlags(),
        ...this.#flags,
        ...extra,
      ],
      { stdio: ['ignore', log, log] },
    );
    await this.waitAnswering(member);
  }

  /** Kills a member (SIGKILL, or `signal`: SIGTERM stops etcd cleanly) and waits for it to exit. */
  async kill(member: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const proc = this.#members.get(member)?.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill(signal);
    await exited;
  }

  /** The data directory of a member. */
  dataDir(member: string): string {
    return path.join(this.dir, member);
  }

  /** Kills every member, closes the clients and removes the data. */
  async stop(): Promise<void> {
    this.clients.close();
    await Promise.all([...this.#members.keys()].map((m) => this.kill(m)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Waits until a member answers a status call on its own client URL. */
  async waitAnswering(member: string): Promise<void> {
    const proc = this.#members.get(member)?.proc;
    for (let tries = 1; ; tries++) {
      if (proc?.exitCode !== null) {
        // The directory goes with stop(): the error carries the log's last lines.
        const log = path.join(this.dir, `${member}.log`);
        let tail: string;
        try {
          tail = readFileSync(log, 'utf8').trimEnd().split('\n').slice(-8).join('\n  ');
        } catch (err) {
          tail = `(${log} unread: ${(err as Error).message})`;
        }
        throw new Error(
          `etcd ${member} exited (code ${String(proc?.exitCode)}); the last lines of its log:\n  ${tail}`,
        );
      }
      try {
        await this.clients.member(this.ref, member).maintenance.status({ deadline: Date.now() + 1000 });
        return;
      } catch (err) {
        if (tries >= 600) throw err;
        await delay(20);
      }
    }
  }
}

/** How one member joined: its ID, and how long each part took. */
export interface Joined {
  readonly memberID: string;
  /** Tries of addLearner (etcd refuses a change until every voter has been connected a while). */
  readonly addTries: number;
  readonly promoteTries: number;
  readonly ms: { readonly add: number; readonly start: number; readonly promote: number; readonly total: number };
}

/**
 * Grows the cluster by one member through the handlers only, as the cluster machine would:
 * addLearner, start the process with the initialCluster it returned, promote until in sync.
 */
export async function joinMember(local: LocalEtcd, member: string): Promise<Joined> {
  const peerURL = await local.allocate(member);
  const t0 = performance.now();
  const { result: added, tries: addTries } = await retrying('ERR_ETCD_UNHEALTHY', () =>
    addLearner.run({ member, peerURL }, local.ctx()),
  );
  const t1 = performance.now();
  await local.start(member, added.initialCluster, 'existing');
  const t2 = performance.now();
  const { tries: promoteTries } = await retrying('ERR_LEARNER_NOT_IN_SYNC', () =>
    promoteLearner.run({ member, memberID: added.memberID }, local.ctx()),
  );
  const t3 = performance.now();
  const ms = (a: number, b: number): number => Math.round(b - a);
  return {
    memberID: added.memberID,
    addTries,
    promoteTries,
    ms: { add: ms(t0, t1), start: ms(t1, t2), promote: ms(t2, t3), total: ms(t0, t3) },
  };
}

/** Runs `fn` again while it fails with `code`, as the machine would (with a short fixed pause instead of back-off). */
export async function retrying<T>(code: string, fn: () => Promise<T>): Promise<{ result: T; tries: number }> {
  for (let tries = 1; ; tries++) {
    try {
      return { result: await fn(), tries };
    } catch (err) {
      if (!(err instanceof EffectError) || err.code !== code || tries >= 600) throw err;
      await delay(50);
    }
  }
}
