/**
 * A real OCI registry on this machine: distribution's `registry` (the CNCF reference
 * implementation, built by localcluster/tools/build.sh) serving a temp dir over plain HTTP on a
 * 127.0.0.1 port. The release path pushes the operator image and the chart to it; stop() ends
 * the process and removes its storage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from './controlplane/ports.ts';
import { binary } from './controlplane/tools.ts';

/** A running registry. */
export class LocalRegistry {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'local-registry-'));
  /** HOST:PORT, as image references and oci:// URLs name it. */
  host = '';
  #proc: ChildProcess | undefined;

  /** Starts the registry and waits until its /v2/ answers. */
  async start(): Promise<this> {
    const port = await freePort();
    this.host = `127.0.0.1:${port}`;
    const config = path.join(this.dir, 'config.yml');
    writeFileSync(
      config,
      [
        'version: 0.1',
        'log: {level: info, formatter: text}',
        `storage: {filesystem: {rootdirectory: ${path.join(this.dir, 'data')}}, delete: {enabled: true}}`,
        `http: {addr: "${this.host}"}`,
        '',
      ].join('\n'),
    );
    const log = openSync(path.join(this.dir, 'registry.log'), 'a');
    // OTEL_TRACES_EXPORTER: v3 traces by default and would dial a collector that is not there.
    this.#proc = spawn(await binary('registry'), ['serve', config], {
      stdio: ['ignore', log, log],
      env: { ...process.env, OTEL_TRACES_EXPORTER: 'none' },
    });
    for (let i = 0; ; i++) {
      if (this.#proc.exitCode !== null) throw new Error(`registry exited: ${this.log()}`);
      try {
        const res = await fetch(`http://${this.host}/v2/`);
        if (res.ok) break;
      } catch (err) {
        if (i > 100) throw new Error(`registry did not answer: ${String(err)}\n${this.log()}`, { cause: err });
      }
      await delay(100);
    }
    return this;
  }

  /** The registry's log, for failure messages. */
  log(): string {
    return readFileSync(path.join(this.dir, 'registry.log'), 'utf8').slice(-2000);
  }

  /** Stops the registry and removes its storage. */
  async stop(): Promise<void> {
    const proc = this.#proc;
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
