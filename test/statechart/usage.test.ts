/** The statechart command's machines are listed one way wherever they are listed. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../manager/cli.ts';
import { STATECHART_USAGE } from '../../statechart/cli.ts';
import { MACHINE_FORM } from '../../statechart/names.ts';

const root = join(import.meta.dirname, '../..');

describe('etcd-operator statechart: the machines it draws', () => {
  it('are the same in `etcd-operator --help`, `statechart --help`, the README and docs/statecharts.md', async () => {
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    await main(['--help']);
    const help = spy.mock.calls.map((c) => String(c[0])).join('');
    spy.mockRestore();
    expect(MACHINE_FORM).toBe('statechart cluster|member|snapshot|schedule|roll|maintenance|volumes|recovery');
    expect(help).toContain(MACHINE_FORM);
    expect(STATECHART_USAGE).toContain(`etcd-operator ${MACHINE_FORM} `);
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(`etcd-operator ${MACHINE_FORM}\``);
    const docs = readFileSync(join(root, 'docs/statecharts.md'), 'utf8');
    for (const name of MACHINE_FORM.split(' ')[1]!.split('|')) expect(docs).toContain(`statecharts/${name}.svg`);
  });
});
