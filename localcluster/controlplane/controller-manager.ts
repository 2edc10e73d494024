/** kube-controller-manager with every controller that works without a cloud provider. */
import path from 'node:path';
import type { Log } from '../types.ts';
import type { Pki } from './certs.ts';
import { httpsProbe } from './health.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import type { Proc } from './process.ts';
import { startProcess, waitReady } from './process.ts';
import { binary, KUBERNETES_VERSION } from './tools.ts';

/**
 * Every on-by-default controller (garbage collector, namespace, deployment, replicaset, job,
 * cronjob, statefulset, endpointslice, serviceaccount and its tokens, PV binder and expander,
 * node lifecycle...) minus the four that only make sense with a cloud or a Pod network. From
 * 1.37 the three cloud ones are gone from kube-controller-manager, which refuses their names.
 */
export function controllersOf(version = KUBERNETES_VERSION): string {
  const minor = Number(/^v1\.(\d+)\./.exec(version)?.[1] ?? 0);
  const cloud = ['-cloud-node-lifecycle-controller', '-node-route-controller', '-service-lb-controller'];
  return ['*', ...(minor >= 37 ? [] : cloud), '-node-ipam-controller'].join(',');
}

/** Seconds without a Lease renewal after which the node lifecycle controller marks a Node NotReady. */
export const NODE_MONITOR_GRACE_SECONDS = 12;

/** What the controller manager needs: its dir, port, the API server and certificates. */
export interface ControllerManagerOptions {
  readonly dir: string;
  readonly port: number;
  readonly server: string;
  readonly pki: Pki;
  readonly log?: Log;
  /** Its Kubernetes release, when not build.sh's control-plane one. */
  readonly version?: string;
}

/** Starts kube-controller-manager and waits until its /healthz is ok. */
export async function startControllerManager(opts: ControllerManagerOptions): Promise<Proc> {
  const { pki } = opts;
  const kubeconfig = path.join(opts.dir, 'controller-manager.kubeconfig');
  await writeKubeconfig(kubeconfig, {
    server: opts.server,
    caCert: pki.caCert,
    clientCert: pki.kcmCert,
    clientKey: pki.kcmKey,
    user: 'system:kube-controller-manager',
  });
  const proc = await startProcess({
    name: 'kube-controller-manager',
    bin: await binary('kube-controller-manager', opts.version),
    dir: opts.dir,
    log: opts.log,
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${opts.port}`,
      `--tls-cert-file=${pki.kcmServingCert}`,
      `--tls-private-key-file=${pki.kcmServingKey}`,
      `--controllers=${controllersOf(opts.version)}`,
      // Each controller acts as its own service account, so RBAC applies to it as in a real cluster.
      '--use-service-account-credentials=true',
      `--root-ca-file=${pki.caCert}`,
      `--service-account-private-key-file=${pki.saKey}`,
      // The CSR signer issues from the same CA, so a node agent could ask for a kubelet certificate.
      `--cluster-signing-cert-file=${pki.caCert}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      // The default is under /usr/libexec; nothing outside dir is written.
      `--flex-volume-plugin-dir=${path.join(opts.dir, 'flexvolume')}`,
      // A node whose Lease is not renewed for 12 s is NotReady (the default is 50 s), checked every
      // 2 s, so node-loss tests take seconds; the nodes renew every 3 s (see docs/local-node.md).
      `--node-monitor-grace-period=${NODE_MONITOR_GRACE_SECONDS}s`,
      '--node-monitor-period=2s',
      // One instance: a lease would only delay the start by its acquisition.
      '--leader-elect=false',
    ],
  });
  await waitReady(proc, httpsProbe(`https://127.0.0.1:${opts.port}/healthz`, { ca: pki.caCert }), 60_000);
  return proc;
}
