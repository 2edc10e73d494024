/** Kubeconfig files with embedded certificates, so a copy works from anywhere. */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

/** Who a kubeconfig speaks as and to which server. */
export interface KubeconfigSpec {
  readonly server: string;
  readonly caCert: string;
  readonly clientCert: string;
  readonly clientKey: string;
  readonly user: string;
  /** Context and cluster name; default "local". */
  readonly cluster?: string;
}

/** Writes a kubeconfig at file (atomically, mode 0600) for one cluster, user and context. */
export async function writeKubeconfig(file: string, spec: KubeconfigSpec): Promise<void> {
  const b64 = async (p: string): Promise<string> => (await readFile(p)).toString('base64');
  const name = spec.cluster ?? 'local';
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: spec.server, 'certificate-authority-data': await b64(spec.caCert) } }],
    users: [
      {
        name: spec.user,
        user: {
          'client-certificate-data': await b64(spec.clientCert),
          'client-key-data': await b64(spec.clientKey),
        },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: spec.user } }],
    'current-context': name,
    preferences: {},
  };
  // Written under another name and renamed: a reader never sees half a file.
  await writeFile(`${file}.tmp`, stringify(config), { mode: 0o600 });
  await rename(`${file}.tmp`, file);
}
