/** kube-scheduler: the real one, so node affinity, Pod anti-affinity, spread and taints count. */
import path from 'node:path';
import type { Log } from '../types.ts';
import type { Pki } from './certs.ts';
import { httpsProbe } from './health.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import type { Proc } from './process.ts';
import { startProcess, waitReady } from './process.ts';
import { binary } from './tools.ts';

/** What the scheduler needs: its dir, port, the API server and certificates. */
export interface SchedulerOptions {
  readonly dir: string;
  readonly port: number;
  readonly server: string;
  readonly pki: Pki;
  readonly log?: Log;
  /** Its Kubernetes release, when not build.sh's control-plane one. */
  readonly version?: string;
}

/** Starts kube-scheduler (default profile) and waits until its /healthz is ok. */
export async function startScheduler(opts: SchedulerOptions): Promise<Proc> {
  const { pki } = opts;
  const kubeconfig = path.join(opts.dir, 'scheduler.kubeconfig');
  await writeKubeconfig(kubeconfig, {
    server: opts.server,
    caCert: pki.caCert,
    clientCert: pki.schedulerCert,
    clientKey: pki.schedulerKey,
    user: 'system:kube-scheduler',
  });
  const proc = await startProcess({
    name: 'kube-scheduler',
    bin: await binary('kube-scheduler', opts.version),
    dir: opts.dir,
    log: opts.log,
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${opts.port}`,
      `--tls-cert-file=${pki.schedulerServingCert}`,
      `--tls-private-key-file=${pki.schedulerServingKey}`,
      // One instance: a lease would only delay the start by its acquisition.
      '--leader-elect=false',
    ],
  });
  await waitReady(proc, httpsProbe(`https://127.0.0.1:${opts.port}/healthz`, { ca: pki.caCert }), 60_000);
  return proc;
}
