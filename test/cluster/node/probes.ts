/** Readiness, liveness and startup probes: httpGet, tcpSocket, exec and grpc (as a TCP connect). */
import { execFile } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { V1Container, V1Probe } from '@kubernetes/client-node';
import { asIdentity, type Identity } from './securityContext.ts';

/** Where and how a probe reaches its container. */
export interface ProbeTarget {
  readonly podIP: string;
  readonly container: V1Container;
  /** Pid of the container's process, for exec probes (nsenter into its mount and network namespaces). */
  readonly pid: () => number | undefined;
  readonly env: Readonly<Record<string, string>>;
  /** Who exec probes and hooks run as: the container's user; root when absent. */
  readonly identity?: Identity;
}

/** One probe's outcome. */
export interface ProbeResult {
  readonly ok: boolean;
  readonly message: string;
}

function port(target: ProbeTarget, p: number | string): number {
  if (typeof p === 'number') return p;
  if (/^\d+$/.test(p)) return Number(p);
  const named = target.container.ports?.find((cp) => cp.name === p);
  return named?.containerPort ?? -1;
}

/** Runs a probe once. */
export async function probeOnce(probe: V1Probe, target: ProbeTarget): Promise<ProbeResult> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.httpGet) {
    const g = probe.httpGet;
    const lib = g.scheme === 'HTTPS' ? https : http;
    const headers = Object.fromEntries((g.httpHeaders ?? []).map((h) => [h.name, h.value]));
    return new Promise((resolve) => {
      const req = lib.request(
        {
          host: g.host ?? target.podIP,
          port: port(target, g.port),
          path: g.path ?? '/',
          headers,
          timeout: timeoutMs,
          rejectUnauthorized: false,
        },
        (res) => {
          res.resume();
          const code = res.statusCode ?? 0;
          resolve({ ok: code >= 200 && code < 400, message: `HTTP probe returned ${code}` });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs}ms`)));
      req.on('error', (err) => resolve({ ok: false, message: `Get ${g.path ?? '/'}: ${err.message}` }));
      req.end();
    });
  }
  const tcp = probe.tcpSocket ?? (probe.grpc ? { host: undefined, port: probe.grpc.port } : undefined);
  if (tcp) {
    return new Promise((resolve) => {
      const sock = net.connect({ host: tcp.host ?? target.podIP, port: port(target, tcp.port), timeout: timeoutMs });
      sock.once('connect', () => {
        sock.destroy();
        resolve({ ok: true, message: 'connected' });
      });
      sock.once('timeout', () => {
        sock.destroy();
        resolve({ ok: false, message: `dial tcp: timeout after ${timeoutMs}ms` });
      });
      sock.once('error', (err) => resolve({ ok: false, message: `dial tcp: ${err.message}` }));
    });
  }
  if (probe.exec?.command?.length) {
    const pid = target.pid();
    if (!pid) return { ok: false, message: 'container is not running' };
    return new Promise((resolve) => {
      const command = target.identity ? asIdentity(target.identity, probe.exec!.command!) : probe.exec!.command!;
      const cmd = ['-t', String(pid), '-m', '-u', '-n', '--', ...command];
      execFile('nsenter', cmd, { env: { ...target.env }, timeout: timeoutMs }, (err, stdout, stderr) => {
        resolve({ ok: !err, message: err ? `exec probe failed: ${(stderr || stdout || err.message).trim()}` : 'ok' });
      });
    });
  }
  return { ok: false, message: 'probe has no handler' };
}

/** Calls back when a probe's outcome crosses its success or failure threshold. */
export class ProbeWorker {
  readonly #probe: V1Probe;
  readonly #target: ProbeTarget;
  readonly #onResult: (ok: boolean, message: string) => void;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #successes = 0;
  #failures = 0;
  #state: boolean | undefined;

  constructor(probe: V1Probe, target: ProbeTarget, onResult: (ok: boolean, message: string) => void) {
    this.#probe = probe;
    this.#target = target;
    this.#onResult = onResult;
  }

  /** Starts probing after initialDelaySeconds, then every periodSeconds. */
  start(): void {
    this.#schedule((this.#probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#tick(), ms);
  }

  async #tick(): Promise<void> {
    const r = await probeOnce(this.#probe, this.#target);
    if (this.#stopped) return;
    if (r.ok) {
      this.#failures = 0;
      this.#successes++;
      if (this.#state !== true && this.#successes >= (this.#probe.successThreshold ?? 1)) this.#set(true, r.message);
    } else {
      this.#successes = 0;
      this.#failures++;
      if (this.#state !== false && this.#failures >= (this.#probe.failureThreshold ?? 3)) this.#set(false, r.message);
    }
    this.#schedule((this.#probe.periodSeconds ?? 10) * 1000);
  }

  #set(ok: boolean, message: string): void {
    this.#state = ok;
    this.#onResult(ok, message);
  }
}
