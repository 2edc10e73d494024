/**
 * The KubeConfig every part of the project makes its API clients from: client-node's, with its
 * connections kept between calls.
 *
 * client-node 2.0 gives each API call (and each watch) a new undici Agent, so every call opened a
 * TCP and TLS connection of its own and dropped it: a handshake per request on both sides, the
 * API server verifying the client certificate each time, a socket in TIME_WAIT after. Measured on
 * the local cluster: 20 reads from one KubeConfig left 20 connections to the API server. This
 * class keeps the first Agent made for a server and TLS identity and hands it to every later call,
 * so calls share its pool of kept-alive connections (undici closes the idle ones after a few
 * seconds). A changed identity (a rotated client certificate or CA, read anew for each call as
 * client-node does) gets a new Agent, and the old one is closed once its calls end.
 */
import { KubeConfig as ClientKubeConfig, bufferFromFileOrString } from '@kubernetes/client-node';
import type { Cluster, RequestContext } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

export class KubeConfig extends ClientKubeConfig {
  /** Per server: the TLS identity its Agent was made for, and the Agent. */
  readonly #kept = new Map<string, { readonly identity: string; readonly agent: Dispatcher }>();

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const made = context.getDispatcher();
    const cluster = this.getCurrentCluster();
    // No TLS options: no dispatcher, fetch's own.
    if (!made || !cluster) return;
    const identity = this.#identity(cluster);
    const kept = this.#kept.get(cluster.server);
    if (kept?.identity === identity) {
      context.setDispatcher(kept.agent); // `made` never connected: nothing to close
      return;
    }
    if (kept) void kept.agent.close().catch(() => undefined);
    this.#kept.set(cluster.server, { identity, agent: made });
  }

  /** What the Agent is made of (client-node's applyHTTPSOptions and the proxy), as one digest. */
  #identity(cluster: Cluster): string {
    const user = this.getCurrentUser();
    const hash = createHash('sha256');
    for (const part of [
      cluster.proxyUrl ?? '',
      String(cluster.skipTLSVerify ?? false),
      cluster.tlsServerName ?? '',
      bufferFromFileOrString(cluster.caFile, cluster.caData) ?? '',
      bufferFromFileOrString(user?.certFile, user?.certData) ?? '',
      bufferFromFileOrString(user?.keyFile, user?.keyData) ?? '',
    ])
      hash.update(part).update('\0');
    return hash.digest('hex');
  }
}
