import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { statusJSON, streamOptions, terminalSizes } from './remoteCommand.ts';

describe('remote command protocol (v4.channel.k8s.io)', () => {
  it('takes the streams from the query as the API server names them; a terminal has no stderr', () => {
    expect(streamOptions(new URLSearchParams('command=ls&input=1&output=1&error=1'))).toEqual({
      stdin: true,
      stdout: true,
      stderr: true,
      tty: false,
    });
    expect(streamOptions(new URLSearchParams('command=sh&input=1&output=1&error=1&tty=1'))).toEqual({
      stdin: true,
      stdout: true,
      stderr: false,
      tty: true,
    });
    expect(streamOptions(new URLSearchParams('command=ls'))).toBe(
      'you must specify at least 1 of stdin, stdout, stderr',
    );
  });

  it('reads terminal sizes however the resize stream splits them, skipping empty sizes', async () => {
    const chunks = ['{"Width":80,', '"Height":24}{"Width":0,"Height":0}', '{"Width":120,"Height":40}'];
    const sizes = [];
    for await (const s of terminalSizes(Readable.from(chunks.map((c) => Buffer.from(c))))) sizes.push(s);
    expect(sizes).toEqual([
      { Width: 80, Height: 24 },
      { Width: 120, Height: 40 },
    ]);
  });

  it('reports success, an exit code and an internal error as the kubelet does', () => {
    expect(JSON.parse(statusJSON({ exitCode: 0 }))).toEqual({ metadata: {}, status: 'Success' });
    expect(JSON.parse(statusJSON({ exitCode: 137 }))).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '137' }] },
    });
    expect(JSON.parse(statusJSON({ error: 'boom' }))).toMatchObject({ reason: 'InternalError', code: 500 });
  });
});
