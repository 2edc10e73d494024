/**
 * The API server as `kubectl etcd` reaches it: the kubeconfig kubectl would use (--kubeconfig,
 * else $KUBECONFIG, else ~/.kube/config; --context), and plain JSON requests over it, the
 * manager's journal included (through the API server's service proxy, so RBAC decides).
 */
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { GROUP, PLURAL, VERSION } from '../effects/kubernetes/meta.ts';
import { KubeConfig } from '../effects/kubernetes/kube-config.ts';

/** A request the API server answered with an error status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code = 'ERR_KUBECTL_ETCD_API';
  readonly status: number;
  /** The API server's Status reason (NotFound, Forbidden...) or the body's first line. */
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

/** Where the client connects and as whom. */
export interface ConnectOptions {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** The API group and version of the operator's kinds. */
export const GROUP_VERSION = `${GROUP}/${VERSION}`;

/** The resource paths of the operator's kinds, by kind. */
export const PLURALS = {
  EtcdCluster: PLURAL.cluster,
  EtcdMember: PLURAL.member,
  EtcdSnapshot: PLURAL.snapshot,
  EtcdSnapshotSchedule: PLURAL.schedule,
} as const;

/** A kind of the operator's. */
export type Kind = keyof typeof PLURALS;

/** JSON over the API server, with the user's credentials. */
export class KubeClient {
  readonly #kc: KubeConfig;
  /** The namespace the kubeconfig's context names, else default. */
  readonly defaultNamespace: string;

  constructor(o: ConnectOptions = {}) {
    const kc = new KubeConfig();
    // As kubectl: --kubeconfig, else every file $KUBECONFIG lists (merged), else ~/.kube/config.
    try {
      if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
      else kc.loadFromDefault();
    } catch (err) {
      const from = o.kubeconfig ?? process.env.KUBECONFIG ?? '~/.kube/config';
      throw new ApiError(
        0,
        'NoKubeconfig',
        `cannot read the kubeconfig ${from} (${(err as Error).message}): give --kubeconfig PATH or set KUBECONFIG`,
      );
    }
    if (o.context) kc.setCurrentContext(o.context);
    if (!kc.getCurrentCluster()) {
      throw new ApiError(0, 'NoCluster', 'no cluster in the kubeconfig: give --kubeconfig PATH or set KUBECONFIG');
    }
    this.#kc = kc;
    this.defaultNamespace = kc.getContextObject(kc.currentContext)?.namespace ?? 'default';
  }

  /** `/apis/etcd-operator.dev/v1alpha1/namespaces/NS/PLURAL[/NAME]`. */
  static path(kind: Kind, namespace: string, name?: string): string {
    const base = `/apis/${GROUP_VERSION}/namespaces/${encodeURIComponent(namespace)}/${PLURALS[kind]}`;
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  /** GET a JSON object. */
  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** GET text (a chart, say); throws an ApiError on an error status. */
  async text(path: string, timeoutMs = 30_000): Promise<string> {
    const { status, body } = await this.#send('GET', path, undefined, undefined, timeoutMs);
    if (status >= 300) throw apiError(status, body, path);
    return body;
  }

  /** POST (create) an object; resolves to what the API server stored. */
  create<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  /** A JSON merge patch. */
  mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.request<T>('PATCH', path, patch, 'application/merge-patch+json');
  }

  /** One request with a JSON body and answer. */
  async request<T>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    const { status, body: text } = await this.#send(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      contentType,
    );
    if (status >= 300) throw apiError(status, text, path);
    return JSON.parse(text) as T;
  }

  async #send(
    method: string,
    path: string,
    body: string | undefined,
    contentType: string | undefined,
    timeoutMs = 30_000,
  ): Promise<{ status: number; body: string }> {
    const cluster = this.#kc.getCurrentCluster();
    if (!cluster) throw new ApiError(0, 'NoCluster', 'no cluster in the kubeconfig');
    const url = new URL(path, cluster.server.endsWith('/') ? cluster.server : `${cluster.server}/`);
    const opts: RequestOptions = {
      method,
      headers: {
        accept: 'application/json, */*',
        ...(body !== undefined ? { 'content-type': contentType ?? 'application/json' } : {}),
      },
    };
    await this.#kc.applyToHTTPSOptions(opts);
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { ...opts, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', (err) =>
        reject(new ApiError(0, 'Unreachable', `cannot reach the API server at ${cluster.server}: ${err.message}`)),
      );
      req.end(body);
    });
  }
}

/** The API server's Status (or a proxied body) as an ApiError. */
function apiError(status: number, text: string, path: string): ApiError {
  try {
    const s = JSON.parse(text) as { kind?: string; reason?: string; message?: string; error?: string };
    if (s.kind === 'Status') return new ApiError(status, s.reason ?? String(status), s.message ?? text.trim());
    if (typeof s.error === 'string') return new ApiError(status, String(status), s.error);
  } catch {
    // not JSON: a proxied plain-text answer
  }
  const line = text.trim().split('\n')[0] ?? '';
  return new ApiError(status, String(status), `${path}: ${status} ${line}`.trim());
}
