import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceProxy } from './proxy.ts';

const servers: net.Server[] = [];
let proxy: ServiceProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  for (const s of servers.splice(0)) s.close();
});

/** A server on a 127.x address answering with its name. */
async function server(ip: string, name: string): Promise<number> {
  const s = net.createServer((c) => c.end(name));
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, ip, r));
  return (s.address() as net.AddressInfo).port;
}

/** A port on ip where nothing listens (taken from the kernel, then released). */
async function closedPort(ip: string): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, ip, r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

function ask(ip: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect({ host: ip, port });
    let got = '';
    c.on('data', (d) => (got += d.toString()));
    c.on('end', () => resolve(got));
    c.on('error', reject);
  });
}

describe('service proxy', () => {
  it('spreads connections over the endpoints in turn', async () => {
    const a = await server('127.88.0.1', 'a');
    const b = await server('127.88.0.2', 'b');
    const port = await closedPort('127.88.1.1');
    proxy = new ServiceProxy(
      () => undefined,
      () => false,
    );
    await proxy.apply([
      {
        service: 'ns/web:80',
        ip: '127.88.1.1',
        port,
        targets: [
          { ip: '127.88.0.1', port: a },
          { ip: '127.88.0.2', port: b },
        ],
      },
    ]);
    const answers = [await ask('127.88.1.1', port), await ask('127.88.1.1', port), await ask('127.88.1.1', port)];
    expect(answers).toEqual(['a', 'b', 'a']);
  });

  it('tries the next endpoint when one refuses, and never uses a blocked one', async () => {
    const b = await server('127.88.0.2', 'b');
    const c = await server('127.88.0.3', 'c');
    const dead = await closedPort('127.88.0.1');
    const port = await closedPort('127.88.1.2');
    proxy = new ServiceProxy(
      () => undefined,
      (ip) => ip === '127.88.0.3',
    );
    const targets = [
      { ip: '127.88.0.1', port: dead },
      { ip: '127.88.0.2', port: b },
      { ip: '127.88.0.3', port: c },
    ];
    await proxy.apply([{ service: 'ns/web:80', ip: '127.88.1.2', port, targets }]);
    expect([await ask('127.88.1.2', port), await ask('127.88.1.2', port), await ask('127.88.1.2', port)]).toEqual([
      'b',
      'b',
      'b',
    ]);
  });

  it('stops listening on an address whose Service is gone', async () => {
    const a = await server('127.88.0.1', 'a');
    const port = await closedPort('127.88.1.3');
    proxy = new ServiceProxy(
      () => undefined,
      () => false,
    );
    await proxy.apply([{ service: 'ns/web:80', ip: '127.88.1.3', port, targets: [{ ip: '127.88.0.1', port: a }] }]);
    expect(proxy.addresses()).toEqual([`127.88.1.3:${port}`]);
    await proxy.apply([]);
    expect(proxy.addresses()).toEqual([]);
    await expect(ask('127.88.1.3', port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
