import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { runJournalCommand } from '../../journal/cli.ts';
import { openReplacingDamaged } from '../../journal/damaged.ts';
import { isDamage, type JournalError } from '../../journal/errors.ts';
import { Journal } from '../../journal/journal.ts';
import { DAMAGES, damageWhileOpen, demo, member, scribble, step, tempDb } from './helpers.ts';

const made: string[] = [];
afterEach(() => {
  for (const path of made.splice(0)) rmSync(dirname(path), { recursive: true, force: true });
});

/** A closed journal with enough history to span many pages (`steps` per object): a cluster and three members. */
function filled(steps = 400): string {
  const path = tempDb();
  made.push(path);
  const j = Journal.open(path);
  for (let i = 0; i < steps; i++) {
    for (const ref of [demo, member(0), member(1), member(2)]) {
      j.recordStep(ref, { ...step(`s${i}`, `s${i + 1}`, [{ type: 'createPod', params: { member: ref.name } }]) });
    }
  }
  j.close();
  return path;
}

describe('a damaged journal', () => {
  for (const [what, damage] of Object.entries(DAMAGES)) {
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

describe('a journal damaged while open', () => {
  for (const [what, damage] of Object.entries(DAMAGES)) {
    it(`${what}: reads fail with SQLITE_CORRUPT and writes with ERR_JOURNAL_WRITE caused by it, both taken for damage`, () => {
      const path = filled(10);
      const j = Journal.open(path);
      try {
        damageWhileOpen(path, damage);
        const failure = (use: () => unknown): unknown => {
          try {
            use();
          } catch (err) {
            return err;
          }
          return 'no error';
        };
        const reads = [failure(() => j.openIntents()), failure(() => j.timeline({ uid: demo.uid }))];
        for (const err of reads) expect((err as { code?: string }).code).toMatch(/^SQLITE_CORRUPT/);
        const write = failure(() => j.recordStep(demo, step('a', 'b')));
        expect(write).toMatchObject({ code: 'ERR_JOURNAL_WRITE', message: /malformed/ });
        for (const err of [...reads, write]) expect(isDamage(err, { whileOpen: true })).toBe(true);
      } finally {
        try {
          j.close();
        } catch {
          // releasing the lease may meet the damage too; the file is closed all the same
        }
      }
    });
  }

  it('a header overwritten while open (SQLITE_NOTADB) is damage; at open it is not (the path may name another file)', () => {
    const notADatabase = Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' });
    const wrapped = new Error('journal x: write failed: file is not a database', { cause: notADatabase });
    expect(isDamage(wrapped, { whileOpen: true })).toBe(true);
    expect(isDamage(wrapped)).toBe(false);
    expect(
      isDamage(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }), { whileOpen: true }),
    ).toBe(false);
  });
});

describe('onWrite', () => {
  it('is told of every committed write, and of a write that failed with its error', () => {
    const path = tempDb();
    const told: (JournalError | undefined)[] = [];
    const j = Journal.open(path, { busyTimeoutMs: 20, onWrite: (failure) => told.push(failure) });
    const other = new Database(path);
    try {
      j.recordStep(demo, step('Pending', 'Bootstrapping'));
      other.exec('BEGIN EXCLUSIVE');
      expect(() => j.recordStep(demo, step('Bootstrapping', 'Steady'))).toThrow(/database is locked/);
      other.exec('COMMIT');
      j.recordStep(demo, step('Bootstrapping', 'Steady'));
      expect(told.map((f) => f?.code ?? 'ok')).toEqual(['ok', 'ERR_JOURNAL_WRITE', 'ok']);
    } finally {
      other.close();
      j.close();
    }
  });
});
