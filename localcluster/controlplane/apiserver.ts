/** kube-apiserver configured like a real cluster's: TLS, client certificates, RBAC, service accounts. */
import type { Log } from '../types.ts';
import type { Pki } from './certs.ts';
import { httpsProbe } from './health.ts';
import type { Proc } from './process.ts';
import { startProcess, waitReady } from './process.ts';
import type { ServiceRange } from './serviceRange.ts';
import { binary } from './tools.ts';

/** Issuer of service-account tokens, as in most clusters. */
export const serviceAccountIssuer = 'https://kubernetes.default.svc.cluster.local';

/** What the API server needs: its dir, ports, etcd and certificates. */
export interface ApiserverOptions {
  readonly dir: string;
  readonly port: number;
  readonly etcdUrl: string;
  readonly pki: Pki;
  readonly serviceRange: ServiceRange;
  readonly log?: Log;
  /** The release (build.sh's second argument); build.sh's control-plane one when absent. */
  readonly version?: string;
}

/** The flags, one per line so each can carry its reason. */
export function apiserverArgs(opts: ApiserverOptions): string[] {
  const { pki } = opts;
  return [
    `--etcd-servers=${opts.etcdUrl}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${opts.port}`,
    // Loopback as the advertised address keeps every byte on 127.0.0.0/8. Endpoints may not
    // hold a loopback IP, so the reconciler of the `kubernetes` Endpoints is off (the Service stays).
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    // Pods reach the API server through the `kubernetes` Service: the network part DNATs its
    // ClusterIP (in the certificate's SANs) to this loopback address.
    `--service-cluster-ip-range=${opts.serviceRange.cidr}`,
    `--tls-cert-file=${pki.apiserverCert}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--client-ca-file=${pki.caCert}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    `--service-account-issuer=${serviceAccountIssuer}`,
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    `--kubelet-client-certificate=${pki.kubeletClientCert}`,
    `--kubelet-client-key=${pki.kubeletClientKey}`,
    // As kubeadm: a kubelet is reached at its Node's address, not at its host name (a real node
    // reports Hostname too, which nothing here resolves).
    '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname',
    '--allow-privileged=true',
    // The aggregation layer's request headers, as kubeadm sets them: without them every
    // component that reads extension-apiserver-authentication logs an error each second.
    // One CA signs all; only the front-proxy-client name may assert a user in headers.
    `--requestheader-client-ca-file=${pki.caCert}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
    `--proxy-client-key-file=${pki.frontProxyClientKey}`,
  ];
}

/** Starts kube-apiserver and waits until /readyz is ok (this includes etcd and the bootstrap RBAC). */
export async function startApiserver(opts: ApiserverOptions): Promise<Proc> {
  const proc = await startProcess({
    name: 'kube-apiserver',
    bin: await binary('kube-apiserver', opts.version),
    args: apiserverArgs(opts),
    dir: opts.dir,
    log: opts.log,
  });
  const probe = httpsProbe(`https://127.0.0.1:${opts.port}/readyz`, {
    ca: opts.pki.caCert,
    cert: opts.pki.adminCert,
    key: opts.pki.adminKey,
  });
  await waitReady(proc, probe, 120_000);
  return proc;
}
