/**
 * isolate()/heal() without the rest of the network: for a test in another process than the
 * one running the cluster's network (a vitest worker), which only needs to cut Pods off. The
 * rules name addresses only, so nothing needs watching.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ControllerOptions, Network } from '../types.ts';
import { NetnsIsolation } from './netnsIsolation.ts';

/** The fault half of the network. */
export type Isolator = Pick<Network, 'isolate' | 'heal' | 'stop'>;

/** Isolation rules of its own, in tables named after `dir`. */
export async function startIsolator(opts: ControllerOptions): Promise<Isolator> {
  const log = opts.log ?? (() => {});
  const dir = path.resolve(opts.dir);
  await mkdir(dir, { recursive: true });
  const isolation = await NetnsIsolation.start(dir, (line) => log(`isolator: ${line}`));
  return {
    isolate: (podIP: string) => isolation.isolate(podIP),
    heal: (podIP: string) => isolation.heal(podIP),
    stop: () => isolation.stop(),
  };
}
