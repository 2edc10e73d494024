/**
 * A userspace TCP proxy for Services: one listener per Service address and port, each
 * connection sent to the next target in turn (trying the others when one refuses).
 */
import net from 'node:net';
import type { Log } from '../types.ts';
import type { Route, Target } from './routes.ts';

interface Listener {
  readonly server: net.Server;
  route: Route;
  turn: number;
}

/** Serves the routes it is given; apply() again whenever they change. */
export class ServiceProxy {
  readonly #listeners = new Map<string, Listener>();
  readonly #sockets = new Set<net.Socket>();
  /** Addresses that could not be opened, so each is logged once, not on every apply. */
  readonly #failed = new Set<string>();
  readonly #log: Log;
  readonly #blocked: (ip: string) => boolean;

  /** `blocked` names targets never to use (isolated Pods are unreachable through Services too). */
  constructor(log: Log, blocked: (ip: string) => boolean) {
    this.#log = log;
    this.#blocked = blocked;
  }

  /** Opens listeners for new routes, closes those of removed ones, updates targets of the rest. */
  async apply(routes: readonly Route[]): Promise<void> {
    const wanted = new Map(routes.map((r) => [`${r.ip}:${r.port}`, r]));
    for (const [key, l] of this.#listeners) {
      if (wanted.has(key)) continue;
      this.#listeners.delete(key);
      l.server.close();
    }
    for (const [key, route] of wanted) {
      const existing = this.#listeners.get(key);
      if (existing) {
        existing.route = route;
        continue;
      }
      const listener = await this.#listen(route).catch((err: unknown) => {
        if (!this.#failed.has(key)) this.#log(`proxy: cannot listen on ${key} for ${route.service}: ${String(err)}`);
        this.#failed.add(key);
        return undefined;
      });
      if (!listener) continue;
      this.#listeners.set(key, listener);
      this.#failed.delete(key);
    }
  }

  /** The addresses being served, as `ip:port`. */
  addresses(): string[] {
    return [...this.#listeners.keys()];
  }

  /** Closes every listener and connection. */
  async close(): Promise<void> {
    const closing = [...this.#listeners.values()].map((l) => new Promise<void>((r) => l.server.close(() => r())));
    this.#listeners.clear();
    for (const s of this.#sockets) s.destroy();
    await Promise.all(closing);
  }

  #listen(route: Route): Promise<Listener> {
    const listener: Listener = { server: net.createServer({ allowHalfOpen: true }), route, turn: 0 };
    listener.server.on('connection', (client) => this.#accept(listener, client));
    return new Promise((resolve, reject) => {
      listener.server.once('error', reject);
      listener.server.listen({ host: route.ip, port: route.port, exclusive: true }, () => {
        listener.server.off('error', reject);
        listener.server.on('error', (err) => this.#log(`proxy: ${route.service}: ${err.message}`));
        resolve(listener);
      });
    });
  }

  #accept(listener: Listener, client: net.Socket): void {
    this.#track(client);
    client.on('error', () => client.destroy());
    const targets = listener.route.targets.filter((t) => !this.#blocked(t.ip));
    const start = listener.turn++;
    const order = targets.map((_, i) => targets[(start + i) % targets.length] as Target);
    this.#connect(client, order, listener.route.service);
  }

  #connect(client: net.Socket, order: readonly Target[], service: string): void {
    const [target, ...rest] = order;
    if (!target) {
      this.#log(`proxy: ${service}: no reachable endpoint`);
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: target.ip, port: target.port, allowHalfOpen: true });
    this.#track(upstream);
    const refused = (): void => this.#connect(client, rest, service);
    upstream.once('error', refused);
    upstream.once('connect', () => {
      upstream.off('error', refused);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      // end, not destroy: what one side still has buffered for the other must arrive.
      client.on('close', () => upstream.end());
      upstream.on('close', () => client.end());
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  #track(socket: net.Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }
}
