/**
 * The local cluster's network on the machine: a hosts file that the cluster DNS answers from,
 * Services (nftables DNAT to the Pods on the real nodes), and fault injection that cuts a Pod off
 * its peers.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api, DiscoveryV1Api } from '@kubernetes/client-node';
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import type { ControllerOptions, Network } from '../types.ts';
import { renderHosts, writeInPlace } from './hosts.ts';
import { nft } from './nft.ts';
import { Serial, startInformer } from './informer.ts';
import { NetnsIsolation } from './netnsIsolation.ts';
import { refusalRules, removeRefusal, removeTables } from './refusal.ts';
import { routes } from './routes.ts';
import type { Target } from './routes.ts';
import { ServiceRules } from './serviceRules.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

export { startIsolator } from './isolator.ts';
export type { Isolator } from './isolator.ts';

/** The running network, with what tests may want to look at. */
export interface LocalNetwork extends Network {
  /** `ip:port` of every Service address with a DNAT rule (a port with an endpoint). */
  serviceAddresses(): string[];
  /** Resolves once the hosts file and rules reflect everything watched so far. */
  synced(): Promise<void>;
}

/** Starts the network; resolves once the hosts file and rules reflect the current objects. */
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
  await removeTables((line) => log(`network: ${line}`));
  await nft(refusalRules());
  const isolation = await NetnsIsolation.start(dir, (line) => log(`network: ${line}`));
  const services = new ServiceRules(dir);
  // A restart keeps the names Pods already resolve until the first reconcile rewrites them.
  if (!existsSync(hostsFile)) await writeInPlace(hostsFile, renderHosts({ pods: [], services: [] }));

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
    const input = { pods: pods.list(), services: serviceObjects.list() };
    if (await writeInPlace(hostsFile, renderHosts(input))) log('network: hosts file updated');
    await services.apply(routes({ ...input, slices: slices.list(), apiServer }));
  }

  listed = true;
  await serial.kick();
  return {
    hostsFile,
    serviceAddresses: () => services.addresses(),
    synced: () => serial.kick(),
    isolate: (podIP: string) => isolation.isolate(podIP),
    heal: (podIP: string) => isolation.heal(podIP),
    async stop(): Promise<void> {
      stopped = true;
      await serial.close();
      await Promise.all([pods.stop(), serviceObjects.stop(), slices.stop()]);
      await services.close();
      await isolation.stop();
      await nft(removeRefusal());
    },
  };
}

function serverTarget(server: string): Target {
  const url = new URL(server);
  return { ip: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
}
