/**
 * The real nodes of the local cluster: three nodes (or n) as
 * node.ts makes them, and what the machine gives them (routes.ts):
 * - the cluster DNS: CoreDNS answering from the network part's hosts file (hosts plugin,
 *   reloaded every second), so Pods resolve `<svc>.<ns>.svc.cluster.local` and a headless
 *   Service's `<hostname>.<svc>.<ns>.svc...` as the network part's hosts file says;
 * - a registry (distribution) holding the images (images.ts) under their real names, which every node's
 *   containerd pulls from through hosts.toml (config.ts registryHosts), and any image named after
 *   another registry at its own path there (defaultRegistryHosts);
 * - the machine's table: DNAT of the DNS and registry addresses, forwarding between nodes only.
 * Services are the network part's DNAT on the machine (see routes.ts for why not kube-proxy).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { LocalControlPlane } from '../controlplane/index.ts';
import { freePort } from '../controlplane/ports.ts';
import { startProcess, waitReady } from '../controlplane/process.ts';
import type { Proc } from '../controlplane/process.ts';
import { binary, run } from '../controlplane/tools.ts';
import { nft } from '../network/nft.ts';
import { IMAGE_REPOSITORY } from '../../hack/image/spec.ts';
import { LocalRegistry } from '../registry.ts';
import type { Log } from '../types.ts';
import { defaultRegistryHosts, mirrorReference, registryHosts } from './config.ts';
import { writeImageArchive } from './image.ts';
import { imageSpecs } from './images.ts';
import { joinRealNode, writeJoinInfo } from './join.ts';
import type { RealNode } from './node.ts';
import { machineRules, REGISTRY_ADDRESS, REGISTRY_PORT, removeMachineRules } from './routes.ts';

/** Upstream registries whose images the nodes pull from the local one. */
const MIRRORED = ['quay.io', 'registry.k8s.io', 'docker.io', 'ghcr.io'];

/** What the machine runs for the real nodes, started once per cluster. */
export interface RealNodeServices {
  /**
   * Starts (or, after its stop, starts again) node `name`, its state in `dir/<name>`, with the
   * cluster's DNS and registry (join.ts: other processes start nodes the same way).
   */
  startNode(name: string, labels: Readonly<Record<string, string>>): Promise<RealNode>;
  /** The registry's HOST:PORT on the machine (push more images there with mirrorReference). */
  readonly registryHost: string;
  stop(): Promise<void>;
}

/** Options of startRealNodeServices. */
export interface RealNodeServicesOptions {
  readonly dir: string;
  readonly controlPlane: LocalControlPlane;
  /** The network part's hosts file (what the cluster DNS answers). */
  readonly hostsFile: string;
  readonly log?: Log;
}

/** Starts CoreDNS and the registry, pushes the images, and loads the machine's table. */
export async function startRealNodeServices(opts: RealNodeServicesOptions): Promise<RealNodeServices> {
  const dir = path.resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.splice(0).reverse())
      await s().catch((err: unknown) => opts.log?.(`realnode: ${String(err)}`));
  };
  try {
    const dns = await startDns(dir, opts.hostsFile, opts.log);
    stops.push(() => dns.proc.stop());
    const registry = await new LocalRegistry().start();
    stops.push(() => registry.stop());
    await pushImages(registry.host, path.join(dir, 'images'));
    await pushOperatorImage(registry.host, path.join(dir, 'operator-image'), opts.log);
    const hostsDir = path.join(dir, 'registry-hosts');
    const mirror = `http://${REGISTRY_ADDRESS}:${REGISTRY_PORT}`;
    for (const upstream of MIRRORED) {
      await mkdir(path.join(hostsDir, upstream), { recursive: true });
      await writeFile(path.join(hostsDir, upstream, 'hosts.toml'), registryHosts(upstream, mirror));
    }
    // Any other name (the registry's own machine address, as the install e2e pushes to it) at its path.
    await mkdir(path.join(hostsDir, '_default'), { recursive: true });
    await writeFile(path.join(hostsDir, '_default', 'hosts.toml'), defaultRegistryHosts(mirror));
    const registryPort = Number(registry.host.split(':')[1]);
    await nft(machineRules({ dnsPort: dns.port, registryPort }));
    stops.push(() => nft(removeMachineRules()));
    const cp = opts.controlPlane;
    await writeJoinInfo(dir, {
      pkiDir: cp.pki.dir,
      caCert: cp.pki.caCert,
      apiserverPort: cp.ports.apiserver,
      registryHostsDir: hostsDir,
    });
    return {
      registryHost: registry.host,
      startNode: (name, labels) =>
        joinRealNode({ nodesDir: dir, name, labels, log: opts.log && ((l) => opts.log!(`${name}: ${l}`)) }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** CoreDNS on a loopback port, answering from the hosts file. */
async function startDns(dir: string, hostsFile: string, log?: Log): Promise<{ proc: Proc; port: number }> {
  const port = await freePort();
  const corefile = path.join(dir, 'Corefile');
  await writeFile(
    corefile,
    [
      `.:${port} {`,
      '  bind 127.0.0.1',
      '  errors',
      `  hosts ${hostsFile} {`,
      '    reload 1s',
      '    ttl 5',
      '    fallthrough',
      '  }',
      // A name the hosts file lacks: NXDOMAIN (hosts alone says SERVFAIL), so resolvers go on
      // through their search list at once.
      '  template ANY ANY {',
      '    rcode NXDOMAIN',
      '  }',
      '}',
      '',
    ].join('\n'),
  );
  const proc = await startProcess({
    name: 'coredns',
    bin: await binary('coredns'),
    args: ['-conf', corefile],
    dir,
    log,
  });
  await waitReady(
    proc,
    () => Promise.resolve(proc.lastLines().some((l) => l.includes('CoreDNS-')) ? true : 'starting'),
    30_000,
  );
  return { proc, port };
}

/**
 * The operator's own image, as `make image` builds it (hack/image/build.ts, no container engine;
 * its layers but the sources' are cached), pushed under its real name: the members' check-data
 * init container runs it (the agent image the manager names by default).
 */
async function pushOperatorImage(registryHost: string, out: string, log?: Log): Promise<void> {
  const repo = path.join(import.meta.dirname, '..', '..');
  await run(process.execPath, [path.join(repo, 'hack', 'image', 'build.ts'), '--out', out], 600_000);
  const built = JSON.parse(await readFile(path.join(out, 'image.json'), 'utf8')) as { tag: string; layout: string };
  const name = `${IMAGE_REPOSITORY}:${built.tag}`;
  await run(await binary('crane'), ['push', '--insecure', built.layout, mirrorReference(registryHost, name)], 300_000);
  log?.(`realnode: pushed ${name}`);
  await rm(out, { recursive: true, force: true });
}

/** Writes each image as an OCI layout and pushes it with crane under its full name. */
async function pushImages(registryHost: string, work: string): Promise<void> {
  const crane = await binary('crane');
  await mkdir(work, { recursive: true });
  for (const spec of await imageSpecs()) {
    const tmp = await mkdtemp(path.join(work, '.push-'));
    try {
      const archive = path.join(tmp, 'image.tar');
      await writeImageArchive(spec, archive);
      const layout = path.join(tmp, 'layout');
      await mkdir(layout);
      await run('tar', ['-C', layout, '-xf', archive]);
      await run(crane, ['push', '--insecure', layout, mirrorReference(registryHost, spec.name)], 300_000);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
}

/**
 * Makes `dir` a shared mount (a bind of itself) so that mounts made under it later on the machine
 * (the sized class's tmpfs volumes) reach the nodes, whose mount namespaces are its slaves.
 * Returns the undo: unmounts the bind (lazily, after the volumes' own unmounts).
 */
export async function shareMounts(dir: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  await run('mount', ['--bind', dir, dir]);
  await run('mount', ['--make-rshared', dir]);
  return () => run('umount', ['-l', dir]).then(() => undefined);
}
