/**
 * Nothing here can run Docker, so the Dockerfile is kept in step with `make image` by reading it:
 * the same user, working directory, environment, entrypoint and command, the same folders copied,
 * etcd-operator on PATH and the journal's directory owned by the user.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { APP_DIR, APP_FOLDERS, CLI_LINK, IMAGE_CONFIG, JOURNAL_DIR, USER_ID } from '../../../hack/image/spec.ts';

const text = readFileSync(join(import.meta.dirname, '../../../Dockerfile'), 'utf8');
/** The Dockerfile's instructions as [KEYWORD, rest], continuation lines joined, comments dropped. */
const instructions = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.startsWith('#'))
  .map((l) => {
    const [, keyword, rest] = /^(\w+)\s+(.*)$/.exec(l.trim())!;
    return [keyword!, rest!] as const;
  });
const all = (keyword: string): string[] => instructions.filter(([k]) => k === keyword).map(([, r]) => r);

describe('the Dockerfile builds the image make image builds', () => {
  it('runs the same entrypoint and command as the same user in the same directory', () => {
    expect(JSON.parse(all('ENTRYPOINT').at(-1)!)).toEqual(IMAGE_CONFIG.Entrypoint);
    expect(JSON.parse(all('CMD').at(-1)!)).toEqual(IMAGE_CONFIG.Cmd);
    expect(all('USER').at(-1)).toBe(IMAGE_CONFIG.User);
    expect(all('WORKDIR').at(-1)).toBe(APP_DIR);
    for (const env of IMAGE_CONFIG.Env.filter((e) => !e.startsWith('PATH='))) expect(all('ENV')).toContain(env);
  });

  it('copies the folders the CLI needs at run time, and installs only production dependencies', () => {
    const copied = all('COPY').flatMap((r) => r.split(/\s+/).slice(0, -1));
    expect(copied.filter((c) => !c.startsWith('package')).sort()).toEqual([...APP_FOLDERS].sort());
    expect(all('RUN').join('\n')).toMatch(/npm ci --omit=dev/);
  });

  it('puts etcd-operator on PATH and gives the journal directory to the non-root user', () => {
    const runs = all('RUN').join('\n');
    expect(runs).toContain(`ln -s ${APP_DIR}/manager/cli.ts ${CLI_LINK}`);
    expect(runs).toContain(`chown ${USER_ID}:${USER_ID} ${JOURNAL_DIR}`);
  });
});
