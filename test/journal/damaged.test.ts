import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runJournalCommand } from '../../journal/cli.ts';
import { openReplacingDamaged } from '../../journal/damaged.ts';
import { Journal } from '../../journal/journal.ts';
import { demo, member, step, tempDb } from './helpers.ts';

const made: string[] = [];
afterEach(() => {
  for (const path of made.splice(0)) rmSync(dirname(path), { recursive: true, force: true });
});

/** A closed journal with enough history to span many pages: a cluster and three members. */
function filled(): string {
  const path = tempDb();
  made.push(path);
  const j = Journal.open(path);
  for (let i = 0; i < 400; i++) {
    for (const ref of [demo, member(0), member(1), member(2)]) {
      j.recordStep(ref, { ...step(`s${i}`, `s${i + 1}`, [{ type: 'createPod', params: { member: ref.name } }]) });
    }
  }
  j.close();
  return path;
}

/** Overwrites `bytes` in the middle of the file with garbage, page-aligned, as a bad volume would. */
function scribble(path: string, bytes: number): void {
  const fd = openSync(path, 'r+');
  const at = Math.floor(statSync(path).size / 2 / 4096) * 4096;
  writeSync(fd, randomBytes(bytes), 0, bytes, at);
  closeSync(fd);
}

const damages = {
  'truncated to half': (path: string) => truncateSync(path, Math.floor(statSync(path).size / 2)),
  '32 KiB of garbage in the middle': (path: string) => scribble(path, 32 * 1024),
};

describe('a damaged journal', () => {
  for (const [what, damage] of Object.entries(damages)) {
    it(`${what}: refused with ERR_JOURNAL_DAMAGED, then moved aside and replaced by an empty journal`, () => {
      const path = filled();
      damage(path);
      const size = statSync(path).size;
      expect(() => Journal.open(path)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_DAMAGED' }) as Error);

      const now = new Date('2026-11-24T08:30:00.000Z');
      const { journal, replaced } = openReplacingDamaged(path, {}, now);
      try {
        expect(replaced?.movedTo).toBe(`${path}.damaged-2026-11-24T083000.000Z`);
        expect(replaced?.reason).toMatch(/^journal .* is damaged: /);
        expect(statSync(replaced!.movedTo).size).toBe(size);
        expect(journal.objects()).toEqual([]);
        journal.recordStep(demo, step('Pending', 'Bootstrapping'));
        expect(journal.objects().map((o) => o.ref.name)).toEqual(['demo']);
      } finally {
        journal.close();
      }
      expect(readdirSync(dirname(path)).sort()).toContain(basename(replaced!.movedTo));
    });
  }

  it('a sound journal is opened as it is, its history kept', () => {
    const path = filled();
    const { journal, replaced } = openReplacingDamaged(path);
    try {
      expect(replaced).toBeUndefined();
      expect(journal.objects()).toHaveLength(4);
    } finally {
      journal.close();
    }
    expect(readdirSync(dirname(path)).filter((f) => f.includes('damaged'))).toEqual([]);
  });

  it('a journal another manager holds is not taken for damaged', () => {
    const path = filled();
    const holder = Journal.open(path);
    try {
      expect(() => openReplacingDamaged(path)).toThrow(
        expect.objectContaining({ code: 'ERR_JOURNAL_LOCKED' }) as Error,
      );
      expect(existsSync(path)).toBe(true);
    } finally {
      holder.close();
    }
  });

  it('`etcd-operator journal` on a damaged file says so in one line, exit 1, no stack trace', async () => {
    const path = filled();
    scribble(path, 32 * 1024);
    let [out, err] = ['', ''];
    const code = await runJournalCommand(['demo', '--db', path], {
      stdout: (s) => void (out += s),
      stderr: (s) => void (err += s),
    });
    expect(code).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(/^etcd-operator journal: journal .* is damaged: .*moves it aside .* and starts a new journal/);
    expect(err.trim().split('\n')).toHaveLength(1);
  });
});
