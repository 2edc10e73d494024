/**
 * A real node: containerd, runc and a kubelet of the control plane's Kubernetes release with the
 * bridge CNI plugin, as kind's node container has them, without a container engine:
 *
 * - its own network namespace `eo-rn-<name>` with one veth to the machine (node address
 *   10.250.<index>.2, the machine's end .1), routes to the cluster's ranges through the machine
 *   and the machine's route to its Pods (routes.ts): no default route, nothing leaves the machine. The machine DNATs 10.96.0.1:443 arriving on that veth to the API
 *   server's loopback address (`route_localnet` on the veth), so the kubelet reaches the API server
 *   at the `kubernetes` Service's address, a name in its certificate;
 * - its own mount namespace, held by a `holder` process (the node's init): a tmpfs on /run (so
 *   containerd's /run/containerd and the shims' sockets are the node's own), its own sysfs (of its
 *   network namespace) with the machine's cgroup hierarchies moved under it, and the node's dir
 *   bound on /var/log (the kubelet writes /var/log/pods and /var/log/containers). Every mount
 *   the kubelet and containerd make is in there and goes with the namespace;
 * - cgroups (v1 hierarchies, cgroupfs driver, `failCgroupV1: false`) under `/etcd-operator-<name>`
 *   of each hierarchy, removed by stop().
 *
 * stop() is a machine that dies: every process of the node (kubelet, containerd, shims, containers)
 * is killed at once and its cgroups, network namespace, veth and nftables table go; what a machine
 * keeps on disk stays (containerd's root, the kubelet's, /var/log, the CNI's IP reservations). A
 * start with the same dir and name is that machine booting again: the kubelet finds its Pods'
 * sandboxes dead and runs them again (or removes them, if their Pods are gone meanwhile). A start
 * that finds leftovers of a killed run removes them the same way first.
 */
import http from 'node:http';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { mkdir, readFile, rmdir, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueCert, writeKubeconfig } from '../controlplane/index.ts';
import type { Pki } from '../controlplane/index.ts';
import type { V1Taint } from '@kubernetes/client-node';
import type { Proc } from '../controlplane/process.ts';
import { startProcess, waitReady } from '../controlplane/process.ts';
import { binary, run } from '../controlplane/tools.ts';
import type { Log } from '../types.ts';
import {
  cniConfig,
  containerdConfig as renderContainerdConfig,
  kubeletConfig as renderKubeletConfig,
} from './config.ts';
import { addressing, machineRoute, NODE_NETNS_PREFIX, nodeRoutes, VETH_PREFIX } from './routes.ts';

/** Where and as what the node runs. */
export interface RealNodeOptions {
  /** The node's dir: configs, containerd's root, the kubelet's root, logs. */
  readonly dir: string;
  /** Node name (also the network namespace's and the cgroup root's suffix). */
  readonly name: string;
  /** 1..250: the node's /24s, 10.250.<index>.0/24 (link) and 10.245.<index>.0/24 (Pods). */
  readonly index: number;
  /** The control plane's PKI (its CA signs the kubelet's certificates) and API server port. */
  readonly pki: Pick<Pki, 'dir' | 'caCert'>;
  readonly apiserverPort: number;
  readonly labels?: Readonly<Record<string, string>>;
  /** Taints the Node registers with (a test's own node: PRIVATE_NODE_TAINT). */
  readonly taints?: readonly V1Taint[];
  /** The cluster DNS address Pods get (routes.ts CLUSTER_DNS); none: the machine's resolv.conf. */
  readonly clusterDNS?: string;
  /** containerd's registry hosts dir (config.ts registryHosts), if images are pulled through a mirror. */
  readonly registryHostsDir?: string;
  /** false: containerd alone, no kubelet (to check the runtime and CNI with crictl); default true. */
  readonly kubelet?: boolean;
  readonly log?: Log;
}

/** A running real node. */
export interface RealNode {
  readonly name: string;
  /** The node's InternalIP. */
  readonly address: string;
  /** crictl against this node's containerd (in its namespaces). */
  crictl(args: readonly string[]): Promise<string>;
  /** ctr against this node's containerd, namespace k8s.io (the CRI's). */
  ctr(args: readonly string[]): Promise<string>;
  /** Imports an OCI archive (image.ts) into the CRI's image store. */
  importImage(archive: string): Promise<string>;
  readonly logs: Readonly<Record<'containerd' | 'kubelet', string>>;
  /** Kills the node as a machine dies (see the header); once, whoever calls it again. */
  stop(): Promise<void>;
}

/** The Service range's first address, the `kubernetes` Service (as the control plane's default). */
const kubernetesServiceIP = '10.96.0.1';
/** The pause image containerd runs each sandbox from (built by the project: tools/pause). */
export const sandboxImage = 'registry.k8s.io/pause:3.10.1';
const cgroupBase = '/sys/fs/cgroup';

const sh = (cmd: string, args: readonly string[]): Promise<string> => run(cmd, args, 120_000);

export const netnsOf = (name: string): string => `${NODE_NETNS_PREFIX}${name}`;
const vethOf = (index: number): string => `${VETH_PREFIX}${index}`;
const cgroupRootOf = (name: string): string => `/etcd-operator-${name}`;
const nftTableOf = (name: string): string => `eo-rn-${name}`;

/** Starts containerd and the kubelet of one node and waits until the kubelet's /healthz is ok. */
export async function startRealNode(opts: RealNodeOptions): Promise<RealNode> {
  if (process.getuid?.() !== 0) throw new Error('a real node needs root (namespaces, mounts, cgroups)');
  if (!Number.isInteger(opts.index) || opts.index < 1 || opts.index > 250) throw new Error('index: 1..250');
  const dir = path.resolve(opts.dir);
  const { name, index } = opts;
  const kubelet = opts.kubelet === false ? undefined : await binary('kubelet');
  const containerd = await binary('containerd');
  const runc = await binary('runc');
  const crictlBin = await binary('crictl');
  const ctrBin = await binary('ctr');
  const cniBin = path.dirname(await binary('bridge'));
  await Promise.all(['host-local', 'loopback', 'portmap', 'containerd-shim-runc-v2'].map((t) => binary(t)));
  await cleanUp(dir, name, index);
  await mkdir(dir, { recursive: true });

  const netns = netnsOf(name);
  const { machine: hostAddr, node: address, podCidr, veth } = addressing(index);
  const cgroupRoot = cgroupRootOf(name);

  // The network namespace, its link to the machine (the nodes' router: routes.ts), and the way to
  // the API server.
  await sh('ip', ['netns', 'add', netns]);
  await sh('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
  await sh('ip', ['addr', 'add', `${hostAddr}/24`, 'dev', veth]);
  await sh('ip', ['link', 'set', veth, 'up']);
  const inNs = (args: readonly string[]): Promise<string> => sh('ip', ['-n', netns, ...args]);
  await inNs(['link', 'set', 'lo', 'up']);
  await inNs(['addr', 'add', `${address}/24`, 'dev', 'eth0']);
  await inNs(['link', 'set', 'eth0', 'up']);
  for (const r of nodeRoutes(index)) await inNs(r);
  await sh('ip', machineRoute(index));
  await writeFile(`/proc/sys/net/ipv4/conf/${veth}/route_localnet`, '1');
  await writeFile(`/proc/sys/net/ipv4/conf/${veth}/forwarding`, '1');
  await sh('ip', ['netns', 'exec', netns, 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
  const table = nftTableOf(name);
  await sh('nft', [
    `add table ip ${table}; add chain ip ${table} pre { type nat hook prerouting priority dstnat; }; ` +
      `add rule ip ${table} pre iifname "${veth}" ip daddr ${kubernetesServiceIP} tcp dport 443 ` +
      `dnat to 127.0.0.1:${opts.apiserverPort}`,
  ]);

  // The kubelet's identity: a client certificate (system:node:<name>) and a serving one.
  const pkiDir = opts.pki.dir;
  const client = `node-${name}-kubelet-client`;
  const serving = `node-${name}-kubelet-serving`;
  await issueCert(pkiDir, { name: client, subject: `/O=system:nodes/CN=system:node:${name}`, usage: 'clientAuth' });
  await issueCert(pkiDir, {
    name: serving,
    subject: `/CN=${name}`,
    usage: 'serverAuth',
    sans: [`IP:${address}`, `DNS:${name}`],
  });
  const kubeconfig = path.join(dir, 'kubelet.kubeconfig');
  await writeKubeconfig(kubeconfig, {
    server: `https://${kubernetesServiceIP}:443`,
    caCert: opts.pki.caCert,
    clientCert: path.join(pkiDir, `${client}.crt`),
    clientKey: path.join(pkiDir, `${client}.key`),
    user: `system:node:${name}`,
  });

  // containerd: its own root, state and socket; runc from the cache; CNI from the node's dir.
  const cniConf = path.join(dir, 'cni', 'net.d');
  await mkdir(cniConf, { recursive: true });
  await writeFile(path.join(cniConf, '10-bridge.conflist'), cniConfig(podCidr, path.join(dir, 'cni', 'ipam')));
  const socket = '/run/containerd/containerd.sock';
  const containerdConfig = path.join(dir, 'containerd.toml');
  await writeFile(
    containerdConfig,
    renderContainerdConfig({
      root: path.join(dir, 'containerd', 'root'),
      socket,
      sandboxImage,
      runc,
      cniBinDir: cniBin,
      cniConfDir: cniConf,
      registryHostsDir: opts.registryHostsDir,
    }),
  );

  // The kubelet: cgroupfs (the machine has cgroup v1 hierarchies), its own cgroup root.
  const kubeletConfig = path.join(dir, 'kubelet.yaml');
  await writeFile(
    kubeletConfig,
    renderKubeletConfig({
      cgroupRoot,
      socket,
      address,
      podCidr,
      tlsCertFile: path.join(pkiDir, `${serving}.crt`),
      tlsPrivateKeyFile: path.join(pkiDir, `${serving}.key`),
      clientCAFile: opts.pki.caCert,
      clusterDNS: opts.clusterDNS,
      taints: opts.taints,
    }),
  );
  await mkdir(path.join(dir, 'var-log'), { recursive: true });

  const procs: Proc[] = [];
  const env = { log: opts.log, dir };
  let releaseHolderLock = (): void => undefined;
  try {
    // The node's init: makes its mounts, then holds the mount namespace.
    const setup = [
      'set -e',
      'mount -t tmpfs -o mode=755 tmpfs /run',
      'mkdir -p /run/containerd',
      `mkdir -p ${dir}/.cgroup`,
      `mount --rbind ${cgroupBase} ${dir}/.cgroup`,
      'mount -t sysfs sysfs /sys',
      `mount --move ${dir}/.cgroup ${cgroupBase}`,
      `mount --bind ${dir}/var-log /var/log`,
      // The kernel settings the kubelet sets at start (protectKernelDefaults: false) are the whole
      // machine's, not a namespace's: the node sees files with the values it wants instead.
      ...(await kernelTunablesMasks(dir)),
      'echo ready',
      'exec sleep infinity',
    ].join('\n');
    // The node's own processes (holder, containerd and so its shims, kubelet) go in
    // <cgroupRoot>/system, the Pods in <cgroupRoot>/kubepods: all of the node in one tree, as a
    // kind node container's, which clean-up empties by killing what is in it.
    const system = await makeNodeCgroups(cgroupRoot);
    releaseHolderLock = await lockNodes();
    const holder = await startProcess({
      ...env,
      name: 'holder',
      bin: '/usr/bin/nsenter',
      args: [
        `--net=/run/netns/${netns}`,
        '--',
        'unshare',
        '--mount',
        '--propagation',
        // slave: a mount the machine makes later under a shared mount (cluster.ts shareMounts: the
        // sized volumes' tmpfs) appears in the node too; the node's own mounts stay its own.
        'slave',
        '--',
        'bash',
        '-c',
        setup,
      ],
    });
    procs.push(holder);
    await joinCgroups(system, holder.pid);
    await waitReady(holder, () => Promise.resolve(holder.lastLines().includes('ready') ? true : 'setting up'), 10_000);
    releaseHolderLock();
    // The holder's pid is setpriv's, which exec'd nsenter, unshare, bash and sleep: the same pid.
    const enter = ['--target', String(holder.pid), '--mount', '--net', '--'];

    const ctrd = await startProcess({
      ...env,
      name: 'containerd',
      bin: '/usr/bin/nsenter',
      args: [...enter, containerd, '--config', containerdConfig],
    });
    procs.push(ctrd);
    await joinCgroups(system, ctrd.pid);
    const crictl = (args: readonly string[]): Promise<string> =>
      sh('nsenter', [
        ...enter,
        crictlBin,
        '--runtime-endpoint',
        `unix://${socket}`,
        '--image-endpoint',
        `unix://${socket}`,
        ...args,
      ]);
    const ctr = (args: readonly string[]): Promise<string> =>
      sh('nsenter', [...enter, ctrBin, '--address', socket, '--namespace', 'k8s.io', ...args]);
    await waitReady(ctrd, async () => ((await crictl(['info']).then(() => true)) ? true : 'no'), 60_000);

    const labels = Object.entries(opts.labels ?? {}).map(([k, v]) => `${k}=${v}`);
    const kl =
      kubelet === undefined
        ? undefined
        : await startProcess({
            ...env,
            name: 'kubelet',
            bin: '/usr/bin/nsenter',
            args: [
              ...enter,
              kubelet,
              `--config=${kubeletConfig}`,
              `--kubeconfig=${kubeconfig}`,
              `--root-dir=${path.join(dir, 'kubelet')}`,
              `--hostname-override=${name}`,
              `--node-ip=${address}`,
              ...(labels.length ? [`--node-labels=${labels.join(',')}`] : []),
              '--v=2',
            ],
          });
    if (kl) procs.push(kl);
    if (kl) await joinCgroups(system, kl.pid);
    const healthz = (): Promise<string | true> =>
      new Promise((resolve, reject) => {
        const req = http.get(`http://${address}:10248/healthz`, { timeout: 3_000 }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () =>
            resolve(res.statusCode === 200 && body.trim() === 'ok' ? true : `${res.statusCode}: ${body}`),
          );
        });
        req.on('timeout', () => req.destroy(new Error('no answer in 3 s')));
        req.on('error', reject);
      });
    if (kl) await waitReady(kl, healthz, 120_000);

    let stopped: Promise<void> | undefined;
    const die = async (): Promise<void> => {
      // No graceful step: the kubelet, containerd and every container are SIGKILLed together.
      await cleanUp(dir, name, index);
      await Promise.all(procs.map((p) => p.stop()));
    };

    return {
      name,
      address,
      crictl,
      ctr,
      importImage: (archive) => ctr(['images', 'import', '--platform', 'linux/amd64', archive]),
      logs: { containerd: ctrd.logPath, kubelet: kl?.logPath ?? '' },
      stop: () => (stopped ??= die()),
    };
  } catch (err) {
    releaseHolderLock();
    for (const p of procs.reverse()) await p.stop(2_000);
    await cleanUp(dir, name, index);
    throw err;
  }
}

/** The v1 hierarchies (every one mounted under /sys/fs/cgroup but the cgroup2 one). */
function v1Hierarchies(): string[] {
  return readdirSync(cgroupBase).filter((h) => h !== 'unified' && existsSync(path.join(cgroupBase, h, 'cgroup.procs')));
}

/**
 * Makes <root> and <root>/system in every v1 hierarchy and returns the system ones. A new v1 cpuset
 * is empty until given its parent's CPUs and memory nodes, so those are copied down.
 */
async function makeNodeCgroups(root: string): Promise<string[]> {
  const dirs: string[] = [];
  for (const h of v1Hierarchies()) {
    const system = path.join(cgroupBase, h, root, 'system');
    await mkdir(system, { recursive: true });
    if (h === 'cpuset') {
      for (const d of [path.dirname(system), system]) {
        for (const f of ['cpuset.cpus', 'cpuset.mems']) {
          await writeFile(path.join(d, f), await readFile(path.join(path.dirname(d), f)));
        }
      }
    }
    dirs.push(system);
  }
  return dirs;
}

/** Moves a process (all its threads) into the given cgroups; its later children follow it. */
async function joinCgroups(cgroups: readonly string[], pid: number): Promise<void> {
  for (const cg of cgroups) await writeFile(path.join(cg, 'cgroup.procs'), `${pid}\n`);
}

/**
 * The kubelet's container manager sets vm.overcommit_memory=1, vm.panic_on_oom=0, kernel.panic=10,
 * kernel.panic_on_oops=1 and the root key quotas when they differ (and with protectKernelDefaults
 * refuses to start instead). On a shared machine panic_on_oops=1 would turn any kernel oops into a
 * reboot, so each differing file of /proc/sys is covered, in the node's mount namespace only, by a
 * read-only file holding the wanted value: the kubelet reads it and changes nothing. Containers
 * mount their own /proc and see the machine's values.
 */
async function kernelTunablesMasks(dir: string): Promise<string[]> {
  const wanted: Record<string, number> = {
    'vm/overcommit_memory': 1,
    'vm/panic_on_oom': 0,
    'kernel/panic': 10,
    'kernel/panic_on_oops': 1,
    'kernel/keys/root_maxkeys': 1000000,
    'kernel/keys/root_maxbytes': 25000000,
  };
  const masks = path.join(dir, 'sysctl');
  await mkdir(masks, { recursive: true });
  const lines: string[] = [];
  for (const [key, value] of Object.entries(wanted)) {
    const proc = `/proc/sys/${key}`;
    if (Number((await readFile(proc, 'utf8')).trim()) === value) continue;
    const file = path.join(masks, key.replaceAll('/', '.'));
    await writeFile(file, `${value}\n`);
    lines.push(`mount --bind ${file} ${proc}`, `mount -o remount,bind,ro ${proc}`);
  }
  return lines;
}

/**
 * Removes what a node leaves on the machine: processes in its mount namespace or cgroups (shims,
 * containers, a kubelet or containerd of a killed run), its cgroups, its network namespace (with the
 * veth) and its nftables table. Safe to call when nothing is left.
 */
export async function cleanUp(dir: string, name: string, index: number): Promise<void> {
  const cgroupRoot = cgroupRootOf(name);
  const hierarchies = existsSync(cgroupBase)
    ? readdirSync(cgroupBase).filter((h) => existsSync(path.join(cgroupBase, h, cgroupRoot)))
    : [];
  const release = await lockNodes();
  try {
    await killNode(
      dir,
      hierarchies.map((h) => path.join(cgroupBase, h, cgroupRoot)),
    );
  } finally {
    release();
  }
  for (const h of hierarchies) await removeCgroupTree(path.join(cgroupBase, h, cgroupRoot));
  await sh('ip', ['netns', 'del', netnsOf(name)]).catch(() => undefined);
  await sh('ip', ['link', 'del', vethOf(index)]).catch(() => undefined);
  await sh('nft', ['delete', 'table', 'ip', nftTableOf(name)]).catch(() => undefined);
}

/**
 * One lock for every real node of the machine, across processes (each test file starts its own
 * nodes in its own worker): held while a node's processes are killed and while a new node's
 * holder comes up. Twice in whole runs a node's holder was SIGKILLed right after it came up while
 * another node was being stopped (the likely cause, a mount namespace's number reused, is in
 * killNode); this keeps the two apart all the same. A lock left by a process that died, or older
 * than LOCK_STALE_MS, is taken over.
 */
const LOCK_STALE_MS = 60_000;
async function lockNodes(): Promise<() => void> {
  const file = path.join(os.tmpdir(), 'etcd-operator-realnodes.lock');
  for (;;) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' });
      return () => void unlink(file).catch(() => undefined);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // Held by a process that died, or for longer than any holder takes to come up (its pid reused).
    const holder = readPid(file);
    const age = Date.now() - (statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if ((holder !== undefined && !existsSync(`/proc/${holder}`)) || age > LOCK_STALE_MS)
      await unlink(file).catch(() => undefined);
    else await sleep(50);
  }
}

/**
 * Kills what a node leaves running: processes in its cgroup trees or mount namespace, its holder
 * last. The holder keeps the mount namespace alive while the rest is killed: a namespace whose last
 * process is gone frees its inode number, which the kernel hands to the next new namespace (another
 * node's holder coming up, a container starting elsewhere), and a scan by that number would then
 * kill those. The likely cause of the holders SIGKILLed as they came up (lockNodes), when the
 * holder, in the node's cgroup, went in the first round. The pid file is believed only while that
 * pid is in the node's cgroups: a pid the machine reused is another process.
 */
async function killNode(dir: string, cgroups: readonly string[]): Promise<void> {
  const recorded = readPid(path.join(dir, 'holder.pid'));
  const holderPid = recorded && cgroups.some((cg) => cgroupProcs(cg).includes(recorded)) ? recorded : undefined;
  const mntNs = holderPid ? nsOf(holderPid, 'mnt') : undefined;
  // Up to three rounds: a process may fork while the first round kills.
  for (let round = 0; round < 3; round++) {
    const pids = new Set<number>();
    for (const cg of cgroups) for (const pid of cgroupProcs(cg)) if (pid !== holderPid) pids.add(pid);
    if (mntNs) {
      for (const e of readdirSync('/proc')) {
        const pid = Number(e);
        if (Number.isInteger(pid) && pid !== holderPid && nsOf(pid, 'mnt') === mntNs) pids.add(pid);
      }
    }
    if (pids.size === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await sleep(300);
  }
  if (holderPid && nsOf(holderPid, 'mnt') === mntNs) {
    try {
      process.kill(holderPid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function nsOf(pid: number, ns: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/${ns}`);
  } catch {
    return undefined;
  }
}

function cgroupProcs(cg: string): number[] {
  const out: number[] = [];
  const walk = (d: string): void => {
    try {
      for (const l of readFileSync(path.join(d, 'cgroup.procs'), 'utf8').split('\n')) if (l) out.push(Number(l));
      for (const e of readdirSync(d)) if (statSync(path.join(d, e)).isDirectory()) walk(path.join(d, e));
    } catch {
      /* removed meanwhile */
    }
  };
  walk(cg);
  return out;
}

async function removeCgroupTree(cg: string): Promise<void> {
  let entries: string[];
  try {
    entries = readdirSync(cg).filter((e) => statSync(path.join(cg, e)).isDirectory());
  } catch {
    return;
  }
  for (const e of entries) await removeCgroupTree(path.join(cg, e));
  for (let i = 0; i < 20; i++) {
    try {
      await rmdir(cg);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      await sleep(100);
    }
  }
}
