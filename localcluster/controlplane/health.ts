/** Health checks of the TLS endpoints (/readyz, /healthz), verified against the local CA. */
import { readFileSync } from 'node:fs';
import https from 'node:https';

/** Files to verify the server with and, optionally, a client certificate to present. */
export interface TlsFiles {
  readonly ca: string;
  readonly cert?: string;
  readonly key?: string;
}

/** A probe for waitReady: true when GET url answers 200 "ok", else what it answered. */
export function httpsProbe(url: string, tls: TlsFiles): () => Promise<string | true> {
  const ca = readFileSync(tls.ca);
  const cert = tls.cert ? readFileSync(tls.cert) : undefined;
  const key = tls.key ? readFileSync(tls.key) : undefined;
  return () =>
    new Promise((resolve, reject) => {
      const req = https.get(url, { ca, cert, key, timeout: 3_000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve(
            res.statusCode === 200 && body.trim() === 'ok' ? true : `${res.statusCode}: ${body.trim().slice(-400)}`,
          ),
        );
      });
      req.on('timeout', () => req.destroy(new Error(`${url}: no answer in 3 s`)));
      req.on('error', reject);
    });
}
