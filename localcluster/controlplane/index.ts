/** The local control plane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler on loopback ports. */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ControlPlane, PartOptions } from '../types.ts';
import { startApiserver } from './apiserver.ts';
import type { Pki } from './certs.ts';
import { ensurePki } from './certs.ts';
import { startControllerManager } from './controller-manager.ts';
import { controlPlaneEtcdVersion, startEtcd } from './etcd.ts';
import { startScheduler } from './scheduler.ts';
import { kubectlFor } from './kubectl.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import type { Ports } from './ports.ts';
import { choosePorts } from './ports.ts';
import type { Proc } from './process.ts';
import { killLeftovers } from './process.ts';
import type { ServiceRange } from './serviceRange.ts';
import { chooseServiceRange } from './serviceRange.ts';
import { binary } from './tools.ts';

export { serviceAccountIssuer } from './apiserver.ts';
export type { ServiceRange } from './serviceRange.ts';
export { issueCert } from './certs.ts';
export type { CertRequest, Pki } from './certs.ts';
export { NoServiceRangeError, NotReadyError, ProcessExitedError, ToolError } from './errors.ts';
export { kubectlFor, kubectlPath } from './kubectl.ts';
export { writeKubeconfig } from './kubeconfig.ts';
export type { Ports } from './ports.ts';

const binaryOf = (tool: string): Promise<string> => binary(tool, tool === 'etcd' ? controlPlaneEtcdVersion : undefined);

/** Options of startControlPlane. */
export interface ControlPlaneOptions extends PartOptions {
  /** Start kube-controller-manager too; default true. */
  readonly controllerManager?: boolean;
  /** Start kube-scheduler too; default true. */
  readonly scheduler?: boolean;
  /**
   * The kube-apiserver's release, when not build.sh's control-plane one (e.g. 'v1.37.2', from its
   * own wrapper module): for a real node's kubelet, which may not be newer than the API server.
   */
  readonly apiserverVersion?: string;
  /**
   * The Kubernetes release of every control-plane binary and of the kubectl it returns (e.g.
   * 'v1.37.2' for the real nodes); default build.sh's control-plane one.
   */
  readonly version?: string;
}

/** The running control plane, with what the other parts may need to know about it. */
export interface LocalControlPlane extends ControlPlane {
  readonly ports: Ports;
  readonly pki: Pki;
  /** Where Services get their ClusterIPs (a /16 of 127.0.0.0/8, chosen once per dir). */
  readonly serviceRange: ServiceRange;
  /** Log files of etcd, kube-apiserver, kube-controller-manager and kube-scheduler, by process name. */
  readonly logs: Readonly<Record<string, string>>;
  /** Milliseconds each start step took: pki, etcd, apiserver (to /readyz ok), controllerManager, scheduler. */
  readonly timings: Readonly<Record<string, number>>;
}

/**
 * Starts etcd, kube-apiserver (ready), kube-controller-manager and kube-scheduler (healthy), in that order.
 * Certificates, ports and etcd data in dir are reused, so a restart keeps every object.
 */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<LocalControlPlane> {
  const dir = path.resolve(opts.dir);
  const timings: Record<string, number> = {};
  let mark = Date.now();
  const step = (name: string): void => {
    timings[name] = Date.now() - mark;
    mark = Date.now();
  };
  await mkdir(dir, { recursive: true });
  // Before the ports are chosen: a leftover still holds the ones this dir used last time.
  await killLeftovers(
    dir,
    await Promise.all([
      binaryOf('etcd'),
      binary('kube-apiserver', opts.apiserverVersion ?? opts.version),
      binary('kube-controller-manager', opts.version),
      binary('kube-scheduler', opts.version),
    ]),
  );
  const serviceRange = await chooseServiceRange(dir);
  const pki = await ensurePki(dir, serviceRange.kubernetesServiceIP);
  const ports = await choosePorts(dir);
  const server = `https://127.0.0.1:${ports.apiserver}`;
  const kubeconfigPath = path.join(dir, 'admin.kubeconfig');
  await writeKubeconfig(kubeconfigPath, {
    server,
    caCert: pki.caCert,
    clientCert: pki.adminCert,
    clientKey: pki.adminKey,
    user: 'kubernetes-admin',
  });
  step('pki');

  const procs: Proc[] = [];
  const stop = async (): Promise<void> => {
    // Reverse order: the scheduler and controller manager, then the API server, then its storage.
    for (const proc of procs.splice(0).reverse()) await proc.stop();
  };
  try {
    const etcd = await startEtcd({ dir, clientPort: ports.etcdClient, peerPort: ports.etcdPeer, log: opts.log });
    procs.push(etcd.proc);
    step('etcd');
    procs.push(
      await startApiserver({
        dir,
        port: ports.apiserver,
        etcdUrl: etcd.url,
        pki,
        serviceRange,
        log: opts.log,
        version: opts.apiserverVersion ?? opts.version,
      }),
    );
    step('apiserver');
    if (opts.controllerManager !== false) {
      procs.push(
        await startControllerManager({
          dir,
          port: ports.controllerManager,
          server,
          pki,
          log: opts.log,
          version: opts.version,
        }),
      );
      step('controllerManager');
    }
    if (opts.scheduler !== false) {
      procs.push(
        await startScheduler({ dir, port: ports.scheduler, server, pki, log: opts.log, version: opts.version }),
      );
      step('scheduler');
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    dir,
    kubeconfigPath,
    server,
    kubectl: kubectlFor(kubeconfigPath, opts.version ? await binary('kubectl', opts.version) : undefined),
    ports,
    pki,
    serviceRange,
    logs: Object.fromEntries(procs.map((p) => [p.name, p.logPath])),
    timings,
    stop,
  };
}
