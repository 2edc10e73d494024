/**
 * Certificates for the TLS tests: a CA and leaves made with openssl by the control plane's own
 * certificate code, in a temp dir, and the Secrets and client credentials built from them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { issueCert, makeCa, type CertRequest } from '../../../localcluster/controlplane/certs.ts';
import type { EtcdClientTLS } from '../../../effects/etcd/index.ts';

/** A leaf's files: PEM certificate and key, beside the CA that signed it. */
export interface Leaf {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

/** A CA in a temp dir that signs leaves on demand; `remove()` deletes it all. */
export class TestPki {
  readonly dir: string;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /** A new CA. */
  static async create(prefix = 'etcd-tls-'): Promise<TestPki> {
    const pki = new TestPki(mkdtempSync(path.join(os.tmpdir(), prefix)));
    await makeCa(pki.dir);
    return pki;
  }

  /** Signs a leaf: `<name>.crt` and `<name>.key` (EC P-256, 10 years). */
  async issue(req: CertRequest): Promise<Leaf> {
    await issueCert(this.dir, req);
    return this.leaf(req.name);
  }

  /** The files of a leaf issued before. */
  leaf(name: string): Leaf {
    const f = (n: string): string => path.join(this.dir, n);
    return { cert: f(`${name}.crt`), key: f(`${name}.key`), ca: f('ca.crt') };
  }

  /** Deletes the CA and every leaf. */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A leaf as the operator's client credentials. */
export const credentialsOf = (leaf: Leaf): EtcdClientTLS => ({
  ca: readFileSync(leaf.ca),
  cert: readFileSync(leaf.cert),
  key: readFileSync(leaf.key),
});

/** A leaf as a kubernetes.io/tls Secret with ca.crt, as the API server returns it (base64 data). */
export function tlsSecret(name: string, leaf: Leaf, namespace = 'ns'): V1Secret {
  const b64 = (file: string): string => readFileSync(file).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name, namespace },
    data: { 'tls.crt': b64(leaf.cert), 'tls.key': b64(leaf.key), 'ca.crt': b64(leaf.ca) },
  };
}
