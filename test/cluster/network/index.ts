/**
 * The local cluster's network: a hosts file that answers like the cluster DNS, Services (nftables
 * DNAT to Pods in their own network namespaces behind one bridge, or a TCP proxy on loopback
 * addresses in the older loopback mode), and fault injection that cuts a Pod off its peers.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api, DiscoveryV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import type { ControllerOptions, Network } from '../types.ts';
import { renderHosts, writeInPlace } from './hosts.ts';
import { Serial, startInformer } from './informer.ts';
import { claimBridge, removePodNetwork } from './bridge.ts';
import { startIsolation } from './isolator.ts';
import { podNetworkMode } from './podNetwork.ts';
import { ServiceProxy } from './proxy.ts';
import { routes } from './routes.ts';
import type { Target } from './routes.ts';
import { ServiceAddresses } from './serviceAddresses.ts';
import { ServiceRules } from './serviceRules.ts';

export { startIsolator } from './isolator.ts';
export type { Isolator } from './isolator.ts';
export { podNetworkMode } from './podNetwork.ts';
export type { PodNetworkMode } from './podNetwork.ts';

/** The running network, with what tests may want to look at. */
export interface LocalNetwork extends Network {
  /** `ip:port` of every Service address served (by the proxy, or by DNAT rules). */
  serviceAddresses(): string[];
  /** Resolves once the hosts file, proxy and rules reflect everything watched so far. */
  synced(): Promise<void>;
  /**
   * The cgroup directory a container of the Pod at this address should start in (its pid
   * written to cgroup.procs before exec), so isolate() needs no rescan to catch a restarted
   * container; undefined when the machine has no cgroup v2 tree or Pods have their own namespaces.
   */
  cgroupFor(podIP: string): Promise<string | undefined>;
}

/** Starts the network; resolves once the hosts file and proxy reflect the current objects. */
export async function startNetwork(opts: ControllerOptions): Promise<LocalNetwork> {
  const log = opts.log ?? (() => {});
  const dir = path.resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const hostsFile = path.join(dir, 'hosts');
  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfigPath);
  const apiServer = serverTarget(kc.getCurrentCluster()?.server ?? '');
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);

  let stopped = false;
  const netns = podNetworkMode() === 'netns';
  const owned = netns && (await claimBridge((line) => log(`network: ${line}`)));
  const addresses = new ServiceAddresses(netns);
  const isolation = await startIsolation(dir, (line) => log(`network: ${line}`));
  const services = netns
    ? new ServiceRules(dir)
    : new ServiceProxy(
        (line) => log(`network: ${line}`),
        (ip) => isolation.isIsolated(ip),
      );
  // A restart keeps the names Pods already resolve until the first reconcile rewrites them.
  if (!existsSync(hostsFile))
    await writeInPlace(hostsFile, renderHosts({ pods: [], services: [], serviceAddress: () => undefined }));

  const serial = new Serial(
    () => reconcile(),
    (line) => log(`network: ${line}`),
  );
  // Informers report as soon as they connect; reconcile waits until every cache is listed.
  let listed = false;
  const kick = (): void => void (listed && serial.kick());
  const pods = await startInformer<V1Pod>(kc, '/api/v1/pods', () => core.listPodForAllNamespaces(), kick, log);
  const serviceObjects = await startInformer<V1Service>(
    kc,
    '/api/v1/services',
    () => core.listServiceForAllNamespaces(),
    kick,
    log,
  );
  const slices = await startInformer<V1EndpointSlice>(
    kc,
    '/apis/discovery.k8s.io/v1/endpointslices',
    () => discovery.listEndpointSliceForAllNamespaces(),
    kick,
    log,
  );

  async function reconcile(): Promise<void> {
    if (stopped) return;
    addresses.update(serviceObjects.list());
    const serviceAddress = (s: V1Service): string | undefined => addresses.get(s);
    const input = { pods: pods.list(), services: serviceObjects.list(), serviceAddress };
    if (await writeInPlace(hostsFile, renderHosts(input))) log('network: hosts file updated');
    await services.apply(routes({ ...input, slices: slices.list(), apiServer }));
    const kubernetes = serviceObjects
      .list()
      .find((s) => s.metadata?.namespace === 'default' && s.metadata.name === 'kubernetes');
    const host = [apiServer.ip, ...(kubernetes ? [addresses.get(kubernetes) ?? ''] : [])].filter(Boolean);
    await isolation.update(
      pods.list().flatMap((p) => (p.status?.podIP ? [p.status.podIP] : [])),
      host,
    );
  }

  listed = true;
  await serial.kick();
  return {
    hostsFile,
    serviceAddresses: () => services.addresses(),
    synced: () => serial.kick(),
    cgroupFor: (podIP: string) => isolation.cgroupFor(podIP),
    isolate: (podIP: string) => isolation.isolate(podIP),
    heal: (podIP: string) => isolation.heal(podIP),
    async stop(): Promise<void> {
      stopped = true;
      await serial.close();
      await Promise.all([pods.stop(), serviceObjects.stop(), slices.stop()]);
      await services.close();
      await isolation.stop();
      if (owned) await removePodNetwork((line) => log(`network: ${line}`));
    },
  };
}

function serverTarget(server: string): Target {
  const url = new URL(server);
  return { ip: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
}
