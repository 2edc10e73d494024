/** Loopback ports of the control plane, chosen free once and kept in dir/ports.json for restarts. */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

/** The ports each control-plane process listens on, all on 127.0.0.1. */
export interface Ports {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly controllerManager: number;
  readonly scheduler: number;
}

const names = ['etcdClient', 'etcdPeer', 'apiserver', 'controllerManager', 'scheduler'] as const;

/**
 * The ports used last time in this dir when they are still free, else new free ones.
 * Keeping them keeps the kubeconfig's server URL valid for parts that already read it.
 */
export async function choosePorts(dir: string): Promise<Ports> {
  const file = path.join(dir, 'ports.json');
  const before: Partial<Record<(typeof names)[number], number>> = existsSync(file)
    ? (JSON.parse(await readFile(file, 'utf8')) as Ports)
    : {};
  const chosen: Record<string, number> = {};
  for (const name of names) {
    const old = before[name];
    chosen[name] = old !== undefined && (await isFree(old)) ? old : await freePort(Object.values(chosen));
  }
  const ports = chosen as unknown as Ports;
  await writeFile(file, JSON.stringify(ports, null, 2) + '\n');
  return ports;
}

/** A port on 127.0.0.1 that nothing listens on now (the kernel's choice), not one of taken. */
export async function freePort(taken: readonly number[] = []): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    if (!taken.includes(port)) return port;
  }
}

/** Whether a listener could bind 127.0.0.1:port now. */
export function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
