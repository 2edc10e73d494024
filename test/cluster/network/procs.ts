/**
 * What /proc says about TCP sockets and the processes that hold them, to tell which Pod a
 * process belongs to: Pods share the machine's network, but every container has its own
 * mount namespace and listens on its Pod's address.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

/** One IPv4 TCP socket from /proc/net/tcp. */
export interface TcpSocket {
  readonly localIP: string;
  readonly localPort: number;
  readonly remoteIP: string;
  readonly remotePort: number;
  /** Kernel state number: 1 established, 10 listening. */
  readonly state: number;
  readonly inode: string;
}

/** Kernel TCP state of an established connection. */
export const ESTABLISHED = 1;

/** Parses /proc/net/tcp text (addresses in the kernel's little-endian hex). */
export function parseTcp(text: string): TcpSocket[] {
  const out: TcpSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const [local, remote, state, inode] = [f[1], f[2], f[3], f[9]];
    if (!local || !remote || !state || !inode) continue;
    const [lip, lport] = hexAddress(local);
    const [rip, rport] = hexAddress(remote);
    out.push({ localIP: lip, localPort: lport, remoteIP: rip, remotePort: rport, state: parseInt(state, 16), inode });
  }
  return out;
}

function hexAddress(text: string): [string, number] {
  const [ip = '', port = ''] = text.split(':');
  const n = parseInt(ip, 16);
  // /proc prints the address as a host-order word; on little-endian machines the first octet is lowest.
  const octets = [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, n >>> 24];
  return [octets.join('.'), parseInt(port, 16)];
}

/** Every IPv4 TCP socket of the machine's network namespace. */
export async function tcpSockets(): Promise<TcpSocket[]> {
  return parseTcp(await readFile('/proc/net/tcp', 'utf8'));
}

/** A process: its pid, the inodes of its sockets and its mount namespace. */
export interface Proc {
  readonly pid: number;
  readonly sockets: ReadonlySet<string>;
  readonly mountNs: string;
}

/** Every process that can be read now (others come and go while reading, and are skipped). */
export async function processes(): Promise<Proc[]> {
  const pids = (await readdir('/proc')).filter((n) => /^\d+$/.test(n)).map(Number);
  const out: Proc[] = [];
  await Promise.all(
    pids.map(async (pid) => {
      try {
        const mountNs = await readlink(`/proc/${pid}/ns/mnt`);
        const sockets = new Set<string>();
        for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
          const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
          const m = /^socket:\[(\d+)\]$/.exec(target);
          if (m?.[1]) sockets.add(m[1]);
        }
        out.push({ pid, sockets, mountNs });
      } catch {
        // The process ended while being read.
      }
    }),
  );
  return out;
}

/**
 * Which Pod each process belongs to: the processes with a socket bound to a Pod's address,
 * and every process sharing a mount namespace with one of them (never the caller's own).
 */
export function podOfProcess(
  procs: readonly Proc[],
  sockets: readonly TcpSocket[],
  podIPs: ReadonlySet<string>,
  hostMountNs: string,
): Map<number, string> {
  const ipOfInode = new Map<string, string>();
  for (const s of sockets) if (podIPs.has(s.localIP)) ipOfInode.set(s.inode, s.localIP);
  const ipOfNs = new Map<string, string>();
  for (const p of procs) {
    if (p.mountNs === hostMountNs) continue;
    for (const inode of p.sockets) {
      const ip = ipOfInode.get(inode);
      if (ip) ipOfNs.set(p.mountNs, ip);
    }
  }
  const out = new Map<number, string>();
  for (const p of procs) {
    const ip = ipOfNs.get(p.mountNs);
    if (ip) out.set(p.pid, ip);
  }
  return out;
}

/**
 * The established connections to cut: one end held by an isolated Pod, the other by a
 * different Pod (the host's own connections, such as the node's probes, stay).
 */
export function crossingConnections(
  sockets: readonly TcpSocket[],
  procs: readonly Proc[],
  podOf: ReadonlyMap<number, string>,
  podIPs: ReadonlySet<string>,
  isolated: ReadonlySet<string>,
): { srcIP: string; srcPort: number; dstIP: string; dstPort: number }[] {
  const podOfInode = new Map<string, string>();
  for (const p of procs) {
    const pod = podOf.get(p.pid);
    if (pod) for (const inode of p.sockets) podOfInode.set(inode, pod);
  }
  const established = sockets.filter((s) => s.state === ESTABLISHED);
  const byEnds = new Map(established.map((s) => [`${s.localIP}:${s.localPort}>${s.remoteIP}:${s.remotePort}`, s]));
  const owner = (s: TcpSocket): string | undefined =>
    podOfInode.get(s.inode) ?? (podIPs.has(s.localIP) ? s.localIP : undefined);
  const out = [];
  for (const s of established) {
    const mine = owner(s);
    const peer = byEnds.get(`${s.remoteIP}:${s.remotePort}>${s.localIP}:${s.localPort}`);
    const theirs = peer ? owner(peer) : podIPs.has(s.remoteIP) ? s.remoteIP : undefined;
    if (!mine || !theirs || mine === theirs || !(isolated.has(mine) || isolated.has(theirs))) continue;
    out.push({ srcIP: s.localIP, srcPort: s.localPort, dstIP: s.remoteIP, dstPort: s.remotePort });
  }
  return out;
}
