import { describe, expect, it } from 'vitest';
import { dirOf, isLeftOver, tidyReport } from '../../manager/agent-uploads.ts';

const key = 'etcd/prod/demo/nightly-01234567.db';
const now = Date.parse('2026-11-27T06:00:00Z');
const ago = (s: number) => new Date(now - s * 1000);
const upload = (k: string, begun?: Date) => ({ key: k, uploadId: 'u', ...(begun ? { initiated: begun } : {}) });

describe('agent uploads: which unfinished uploads are a dead run', () => {
  it('the directory of a key keeps its slash', () => {
    expect(dirOf(key)).toBe('etcd/prod/demo/');
    expect(dirOf('top.db')).toBe('');
  });

  it.each([
    ['under its own key, begun just now (an earlier attempt of this Job)', upload(key, ago(1)), true],
    ['under its own key, with no sweep age', upload(key), true],
    ['beside it, a snapshot begun before the age', upload('etcd/prod/demo/hourly-89abcdef.db', ago(7201)), true],
    [
      'beside it, a snapshot begun within the age (a Job may still run it)',
      upload('etcd/prod/demo/hourly-89abcdef.db', ago(7199)),
      false,
    ],
    ['beside it, when the store does not say when it was begun', upload('etcd/prod/demo/hourly-89abcdef.db'), false],
    ['beside it, not a snapshot name', upload('etcd/prod/demo/notes.txt', ago(9999)), false],
    ['in a directory below it', upload('etcd/prod/demo/x/hourly-89abcdef.db', ago(9999)), false],
    ['of another cluster', upload('etcd/prod/other/hourly-89abcdef.db', ago(9999)), false],
  ])('%s', (_, u, left) => {
    expect(isLeftOver(u, key, now, 7200 * 1000)).toBe(left);
  });

  it('without a sweep age, only its own key is looked at', () => {
    expect(isLeftOver(upload('etcd/prod/demo/hourly-89abcdef.db', ago(99999)), key, now)).toBe(false);
  });

  it('a report sums what was aborted and says why some could not be', () => {
    expect(tidyReport({ aborted: 1 }, { aborted: 2 })).toEqual({ abortedUploads: 3 });
    expect(tidyReport({ aborted: 1 }, { aborted: 0, error: 'AccessDenied' })).toEqual({
      abortedUploads: 1,
      uploadsNotAborted: 'AccessDenied',
    });
  });
});
