/**
 * A real S3-compatible server for tests: versitygw (built by localcluster/tools/build.sh) serving
 * a temp dir on a 127.0.0.1 port, with one bucket made, and a client for it. Stopped and its dir
 * removed by stop().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CreateBucketCommand, ListBucketsCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3Client, type S3Endpoint } from '../../../effects/s3/index.ts';
import { binary } from '../../../localcluster/controlplane/tools.ts';
import { freePort } from '../etcd/local-etcd.ts';

/** A running versitygw with a bucket. */
export class LocalS3 {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'local-s3-'));
  readonly bucket = 'snapshots';
  endpoint!: S3Endpoint;
  client!: S3Client;
  #proc: ChildProcess | undefined;

  /** Starts the server, waits until it answers, makes the bucket. */
  async start(): Promise<this> {
    const port = await freePort();
    const data = path.join(this.dir, 'data');
    mkdirSync(data);
    this.endpoint = {
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      accessKeyId: `test${randomBytes(4).toString('hex')}`,
      secretAccessKey: randomBytes(16).toString('hex'),
    };
    const log = openSync(path.join(this.dir, 'versitygw.log'), 'a');
    const args = ['--access', this.endpoint.accessKeyId, '--secret', this.endpoint.secretAccessKey];
    this.#proc = spawn(await binary('versitygw'), [...args, '--port', `127.0.0.1:${port}`, 'posix', data], {
      stdio: ['ignore', log, log],
    });
    this.client = s3Client(this.endpoint);
    for (let i = 0; ; i++) {
      if (this.#proc.exitCode !== null) throw new Error(`versitygw exited: ${this.log()}`);
      try {
        await this.client.send(new ListBucketsCommand({}));
        break;
      } catch (err) {
        if (i > 100) throw new Error(`versitygw did not answer: ${String(err)}\n${this.log()}`, { cause: err });
        await delay(100);
      }
    }
    await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    return this;
  }

  /** The server's log, for failure messages. */
  log(): string {
    return readFileSync(path.join(this.dir, 'versitygw.log'), 'utf8').slice(-2000);
  }

  /** Stops the server and removes its dir. */
  async stop(): Promise<void> {
    this.client?.destroy();
    const proc = this.#proc;
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
