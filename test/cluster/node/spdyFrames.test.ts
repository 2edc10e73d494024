import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  encodePlain,
  parseHeaderBlock,
  SPDY3_DICTIONARY,
  SpdyClosedError,
  SpdyDecoder,
  SpdyEncoder,
  type SpdyFrame,
} from './spdyFrames.ts';

// Written by moby/spdystream's framer (the one kube-apiserver and kubectl use): SYN_STREAM 1
// {streamType: error}, SYN_STREAM 3 {streamType: data, port: 2379, requestID: 0} with FIN,
// DATA 3 "hello" with FIN, PING 1, RST_STREAM 3 CANCEL, GOAWAY 3.
const fromGo =
  '80030001000000290000000100000000000078f9e3c6a7c26260606004a7b392a2d4c45c6851c29a0a0a6800000000ffff' +
  '800300010100002f0000000300000000000002a5470c295029930829b08bc079c3c8d8dc92818181b30812c199a084cf68' +
  '00000000ffff000000030100000568656c6c6f8003000600000004000000018003000300000008000000030000000580' +
  '030007000000080000000300000000';

async function decodeAll(bytes: Buffer, chunk = bytes.length): Promise<SpdyFrame[]> {
  const d = new SpdyDecoder();
  const out: SpdyFrame[] = [];
  for (let i = 0; i < bytes.length; i += chunk) out.push(...(await d.push(bytes.subarray(i, i + chunk))));
  d.close();
  return out;
}

describe('SPDY/3.1 frames', () => {
  it('the header dictionary is the SPDY/3 one, byte for byte', () => {
    expect(SPDY3_DICTIONARY.length).toBe(1423);
    expect(createHash('sha256').update(SPDY3_DICTIONARY).digest('hex')).toBe(
      '51d27341373f923f3cd88e1eb7162aeaa3723d7585ff2399201dc06498407f02',
    );
  });

  it('decodes what the Go framer writes, header blocks sharing one zlib context', async () => {
    const frames = await decodeAll(Buffer.from(fromGo, 'hex'));
    expect(frames).toEqual([
      { type: 'synStream', streamId: 1, associatedId: 0, priority: 0, fin: false, headers: { streamtype: 'error' } },
      {
        type: 'synStream',
        streamId: 3,
        associatedId: 0,
        priority: 0,
        fin: true,
        headers: { streamtype: 'data', port: '2379', requestid: '0' },
      },
      { type: 'data', streamId: 3, fin: true, data: Buffer.from('hello') },
      { type: 'ping', id: 1 },
      { type: 'rstStream', streamId: 3, status: 5 },
      { type: 'goAway', lastGoodStreamId: 3, status: 0 },
    ]);
  });

  it('decodes frames split anywhere across reads', async () => {
    const whole = await decodeAll(Buffer.from(fromGo, 'hex'));
    expect(await decodeAll(Buffer.from(fromGo, 'hex'), 1)).toEqual(whole);
    expect(await decodeAll(Buffer.from(fromGo, 'hex'), 7)).toEqual(whole);
  });

  it('what it encodes decodes back, many header blocks in one compression context', async () => {
    const enc = new SpdyEncoder();
    const frames: SpdyFrame[] = [
      { type: 'synReply', streamId: 1, fin: false, headers: {} },
      { type: 'synReply', streamId: 3, fin: true, headers: { 'x-stream-protocol-version': 'v4.channel.k8s.io' } },
      { type: 'synStream', streamId: 2, associatedId: 1, priority: 3, fin: false, headers: { streamtype: 'stdout' } },
      { type: 'headers', streamId: 2, fin: false, headers: { a: 'b' } },
      { type: 'data', streamId: 3, fin: false, data: Buffer.alloc(70_000, 7) },
      { type: 'data', streamId: 3, fin: true, data: Buffer.alloc(0) },
      { type: 'windowUpdate', streamId: 3, delta: 65536 },
      { type: 'ping', id: 2 },
      { type: 'rstStream', streamId: 1, status: 5 },
      { type: 'goAway', lastGoodStreamId: 3, status: 0 },
    ];
    const bytes = Buffer.concat(await Promise.all(frames.map((f) => enc.encode(f))));
    enc.close();
    expect(await decodeAll(bytes, 1000)).toEqual(frames);
  });

  it('frames with a header block need the encoder, which keeps their order', () => {
    expect(() => encodePlain({ type: 'synReply', streamId: 1, fin: false, headers: {} })).toThrow(/SpdyEncoder/);
  });

  it('pushes that overlap (data events do not wait) give their frames in the order the bytes came', async () => {
    const d = new SpdyDecoder();
    const bytes = Buffer.from(fromGo, 'hex');
    const parts = [bytes.subarray(0, 30), bytes.subarray(30, 61), bytes.subarray(61, 100), bytes.subarray(100)];
    const got = (await Promise.all(parts.map((p) => d.push(p)))).flat();
    d.close();
    expect(got).toEqual(await decodeAll(bytes));
  });

  it('a header block still in flight when the connection closes fails as closed, not as a buffer error', async () => {
    const enc = new SpdyEncoder();
    const first = await enc.encode({ type: 'synReply', streamId: 1, fin: false, headers: { a: 'b' } });
    const second = await enc.encode({ type: 'synReply', streamId: 3, fin: false, headers: { c: 'd' } });
    enc.close();
    const d = new SpdyDecoder();
    const pending = [d.push(first), d.push(second)];
    d.close();
    for (const p of pending) await expect(p).rejects.toBeInstanceOf(SpdyClosedError);
    await expect(d.push(first)).rejects.toMatchObject({ code: 'ERR_SPDY_CLOSED' });
  });

  it('a header block cut short is refused as truncated', () => {
    expect(() => parseHeaderBlock(Buffer.alloc(0))).toThrow('SPDY header block is truncated');
    expect(() => parseHeaderBlock(Buffer.from([0, 0, 0, 1, 0, 0]))).toThrow('SPDY header block is truncated');
  });
});
