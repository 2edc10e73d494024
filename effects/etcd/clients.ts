/**
 * etcd3 clients for the etcd handlers: one per cluster (every endpoint) and one per endpoint
 * (a member's own client URL). Cached, and replaced when the resolver gives other addresses or
 * another client certificate, so a scaled cluster is reached at its current endpoints and a
 * renewed certificate is used from the next call on. A cluster of one endpoint shares one
 * client with that endpoint's, and a cluster's clients go when it has no endpoint (parked).
 */
import { Etcd3, type IOptions } from 'etcd3';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type ClusterRef, type EffectContext } from '../types.ts';

/** The operator's client certificate for a cluster with client TLS, and the CA it checks members against (PEM). */
export interface EtcdClientTLS {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Where a cluster's members answer: the runtime knows (Service DNS names; 127.0.0.1 ports in tests). */
export interface EtcdAddresses {
  /** Client URLs of the cluster, e.g. `http://demo-0.demo.ns.svc:2379`; https with client TLS. */
  readonly endpoints: readonly string[];
  /** The client URL of one member, by its name. */
  clientURL(member: string): string;
  /** The certificate https endpoints are called with; one object per content, so a new one means a renewal. */
  readonly tls?: EtcdClientTLS;
  /** Why there is no certificate for https endpoints (the Secret's problem), said instead of calling. */
  readonly tlsProblem?: string;
  /** The name a member's certificate is checked against when its URL holds an address, not that name. */
  serverName?(url: string): string | undefined;
}

/** Resolves a cluster to its addresses. */
export type EtcdResolver = (cluster: ClusterRef) => EtcdAddresses;

/** Options of EtcdClients. */
export interface EtcdClientsOptions {
  /** gRPC deadline of each call, on top of the context's signal (default 5000 ms). */
  readonly callTimeoutMs?: number;
}

/** What an etcd handler gets: the effect context plus the clients. */
export interface EtcdContext extends EffectContext {
  readonly etcd: EtcdClients;
}

type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * etcd3's default policies retry on random hosts and open a 5 s circuit breaker after three
 * failures, which hid a restarted member and made outcomes depend on luck. Calls here fail at
 * once; the handlers decide what to ask next (etcd3 only ever calls `execute`).
 */
const passThrough = {
  execute: (fn: (c: { signal: AbortSignal }) => unknown) =>
    Promise.resolve(fn({ signal: new AbortController().signal })),
} as unknown as Policy;

interface Cached {
  readonly key: string;
  readonly client: Etcd3;
  readonly tls: EtcdClientTLS | undefined;
  readonly serverName: string | undefined;
}

/** Hands out cached etcd3 clients per cluster and per endpoint; `close()` closes them all. */
export class EtcdClients {
  readonly callTimeoutMs: number;
  readonly #resolve: EtcdResolver;
  readonly #clients = new Map<string, Cached>();
  /** The endpoint that last answered, per cluster uid: asked first next time. */
  readonly #answered = new Map<string, string>();

  constructor(resolve: EtcdResolver, options: EtcdClientsOptions = {}) {
    this.#resolve = resolve;
    this.callTimeoutMs = options.callTimeoutMs ?? 5000;
  }

  /** A client over every endpoint of the cluster: each call goes to one of them, at random. */
  cluster(ref: ClusterRef): Etcd3 {
    const addresses = this.#resolve(ref);
    const endpoints = [...addresses.endpoints];
    if (endpoints.length === 0) throw new RangeError(`cluster ${ref.namespace}/${ref.name} has no etcd endpoints`);
    // One endpoint: the same connection as the member's own client, rather than a second one to it.
    const id = endpoints.length === 1 ? `${ref.uid} ${endpoints[0]}` : ref.uid;
    return this.#cached(ref, id, endpoints, addresses);
  }

  /** The cluster's client URLs, the one that last answered first. */
  endpoints(ref: ClusterRef): readonly string[] {
    const all = this.#resolve(ref).endpoints;
    const first = this.#answered.get(ref.uid);
    return first && all.includes(first) ? [first, ...all.filter((u) => u !== first)] : all;
  }

  /** Notes that an endpoint answered, so the next call asks it first. */
  answered(ref: ClusterRef, url: string): void {
    this.#answered.set(ref.uid, url);
  }

  /** A client that talks to one member only, by name: what it answers is that member's own view. */
  member(ref: ClusterRef, member: string): Etcd3 {
    const addresses = this.#resolve(ref);
    const url = addresses.clientURL(member);
    return this.#cached(ref, `${ref.uid} ${url}`, [url], addresses);
  }

  /**
   * A member's client URL and what an https call to it needs (the certificate, the name its
   * certificate is checked against): for etcd's plain HTTP endpoints on the client port (/version).
   */
  address(ref: ClusterRef, member: string): { url: string; tls?: EtcdClientTLS; serverName?: string } {
    const addresses = this.#resolve(ref);
    const url = addresses.clientURL(member);
    if (!url.startsWith('https:')) return { url };
    if (!addresses.tls) throw this.#noCertificate(ref, addresses);
    const serverName = addresses.serverName?.(url);
    return { url, tls: addresses.tls, ...(serverName ? { serverName } : {}) };
  }

  #noCertificate(ref: ClusterRef, addresses: EtcdAddresses): EffectError {
    return new EffectError(
      ERR.TLS_SECRET,
      `no client certificate to call etcd of ${ref.namespace}/${ref.name} with: ${addresses.tlsProblem ?? 'its Secret was not read yet'}`,
    );
  }

  /** A client that talks to one client URL only. */
  endpoint(ref: ClusterRef, url: string): Etcd3 {
    return this.#cached(ref, `${ref.uid} ${url}`, [url], this.#resolve(ref));
  }

  /** Closes the clients of one cluster (by uid), e.g. once it has no endpoint; the next call opens new ones. */
  forget(uid: string): void {
    for (const [id, cached] of this.#clients)
      if (id === uid || id.startsWith(`${uid} `)) {
        cached.client.close();
        this.#clients.delete(id);
      }
    this.#answered.delete(uid);
  }

  /** How many clients are open. */
  get size(): number {
    return this.#clients.size;
  }

  /** Closes every client. The object stays usable: the next call opens new ones. */
  close(): void {
    for (const cached of this.#clients.values()) cached.client.close();
    this.#clients.clear();
  }

  #cached(ref: ClusterRef, id: string, hosts: string[], addresses: EtcdAddresses): Etcd3 {
    const secure = hosts.some((h) => h.startsWith('https:'));
    const tls = secure ? addresses.tls : undefined;
    if (secure && !tls) throw this.#noCertificate(ref, addresses);
    const names = new Set(hosts.map((h) => addresses.serverName?.(h)));
    const serverName = names.size === 1 ? [...names][0] : undefined;
    const key = [...hosts].sort().join(',');
    const found = this.#clients.get(id);
    if (found?.key === key && found.tls === tls && found.serverName === serverName) return found.client;
    found?.client.close();
    const client = new Etcd3({
      hosts,
      dialTimeout: this.callTimeoutMs,
      faultHandling: { global: passThrough, host: () => passThrough },
      ...(tls ? { credentials: { rootCertificate: tls.ca, certChain: tls.cert, privateKey: tls.key } } : {}),
      // A URL by address (pod-ip mode): the member's certificate is checked against its name instead.
      ...(tls && serverName ? { grpcOptions: { 'grpc.ssl_target_name_override': serverName } } : {}),
    });
    this.#clients.set(id, { key, client, tls, serverName });
    return client;
  }
}
