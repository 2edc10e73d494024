/** Streams what a container run appends to its log file, for `kubectl logs -f` and attach. */
import { open } from 'node:fs/promises';

/**
 * Writes what is appended to the file from `from` (its current end when undefined) until the run
 * ends (and its last output is read) or the client goes, then ends `out`.
 */
export async function followLog(
  file: string,
  from: number | undefined,
  live: () => boolean,
  out: NodeJS.WritableStream & { end(): void },
  gone: () => boolean,
): Promise<void> {
  const fh = await open(file, 'r');
  let pos = from ?? (await fh.stat()).size;
  try {
    for (;;) {
      const wasLive = live();
      const { size } = await fh.stat();
      if (size > pos) {
        const buf = Buffer.alloc(size - pos);
        await fh.read(buf, 0, buf.length, pos);
        pos = size;
        out.write(buf);
      }
      if (gone() || !wasLive) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await fh.close();
    out.end();
  }
}
