import { describe, expect, it } from 'vitest';
import { renderIsolation } from './netnsIsolation.ts';

describe('isolation with a network namespace per Pod', () => {
  it('drops forwarded packets from and to isolated addresses, bridged or routed', () => {
    const script = renderIsolation('iso', ['10.244.0.2', '10.244.1.7']);
    for (const family of ['bridge', 'inet']) {
      const table = script.slice(script.indexOf(`table ${family} iso {\n`));
      expect(table).toContain('elements = { 10.244.0.2, 10.244.1.7 }');
      expect(table).toContain('type filter hook forward priority 0; policy accept;');
      expect(table).toContain('ip saddr @isolated drop');
      expect(table).toContain('ip daddr @isolated drop');
    }
  });

  it("in a real node's namespace, drops bridged packets alone (Pods of that node), so the node's own reach its Pods", () => {
    const script = renderIsolation('iso', ['10.245.1.4'], ['bridge']);
    expect(script).not.toContain('inet');
    expect(script).toContain('table bridge iso {\n');
    expect(script).toContain('ip saddr @isolated drop');
  });

  it('with nothing isolated, only removes the tables', () => {
    expect(renderIsolation('iso', [])).toBe(
      'table bridge iso {}\ndelete table bridge iso\ntable inet iso {}\ndelete table inet iso\n',
    );
  });
});
