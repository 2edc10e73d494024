/**
 * isolate()/heal() without the rest of the network: for a test in another process than the
 * one running the cluster's network (a vitest worker), which only needs to cut Pods off.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import type { ControllerOptions, Log, Network } from '../types.ts';
import { Serial, startInformer } from './informer.ts';
import { Isolation } from './isolation.ts';
import { NetnsIsolation } from './netnsIsolation.ts';
import { podNetworkMode } from './podNetwork.ts';

/** The fault half of the network. */
export type Isolator = Pick<Network, 'isolate' | 'heal' | 'stop'> & {
  /** See LocalNetwork.cgroupFor. */
  cgroupFor(podIP: string): Promise<string | undefined>;
};

/** The isolation rules of the pod network mode in use, in tables named after `dir`. */
export function startIsolation(dir: string, log: Log): Promise<Isolation | NetnsIsolation> {
  return podNetworkMode() === 'netns' ? NetnsIsolation.start(dir, log) : Isolation.start(dir, log);
}

/**
 * Watches Pods (and the kubernetes Service) so isolate() knows every Pod; serves nothing. With
 * Pods in their own network namespaces nothing needs watching: the rules name addresses only.
 */
export async function startIsolator(opts: ControllerOptions): Promise<Isolator> {
  const log = opts.log ?? (() => {});
  const dir = path.resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  if (podNetworkMode() === 'netns') {
    const isolation = await NetnsIsolation.start(dir, (line) => log(`isolator: ${line}`));
    return {
      isolate: (podIP: string) => isolation.isolate(podIP),
      heal: (podIP: string) => isolation.heal(podIP),
      cgroupFor: () => isolation.cgroupFor(),
      stop: () => isolation.stop(),
    };
  }
  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const apiHost = new URL(kc.getCurrentCluster()?.server ?? 'https://127.0.0.1').hostname;
  const isolation = await Isolation.start(dir, (line) => log(`isolator: ${line}`));

  let listed = false;
  const serial = new Serial(
    () => update(),
    (line) => log(`isolator: ${line}`),
  );
  const kick = (): void => void (listed && serial.kick());
  const pods = await startInformer<V1Pod>(kc, '/api/v1/pods', () => core.listPodForAllNamespaces(), kick, log);
  const services = await startInformer<V1Service>(
    kc,
    '/api/v1/namespaces/default/services',
    () => core.listNamespacedService({ namespace: 'default' }),
    kick,
    log,
  );

  async function update(): Promise<void> {
    const kubernetes = services.list().find((s) => s.metadata?.name === 'kubernetes')?.spec?.clusterIP;
    const host = [apiHost, ...(kubernetes && kubernetes.startsWith('127.') ? [kubernetes] : [])];
    await isolation.update(
      pods.list().flatMap((p) => (p.status?.podIP ? [p.status.podIP] : [])),
      host,
    );
  }

  listed = true;
  await serial.kick();
  return {
    isolate: async (podIP: string) => {
      await serial.kick();
      await isolation.isolate(podIP);
    },
    heal: (podIP: string) => isolation.heal(podIP),
    cgroupFor: (podIP: string) => isolation.cgroupFor(podIP),
    async stop(): Promise<void> {
      await Promise.all([pods.stop(), services.stop()]);
      await serial.close();
      await isolation.stop();
    },
  };
}
