/**
 * Reads the Prometheus text exposition back: each sample by its series (`name{a="b"}`, labels as
 * written), and each family's name and type from its `# TYPE` line.
 */

/** The samples of an exposition, by series. */
export function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    out.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return out;
}

/** The families of an exposition: name to type (counter, gauge, histogram). */
export function families(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** Every name a query may use for the families: histograms add _bucket, _sum and _count. */
export function seriesNames(text: string): Set<string> {
  return new Set(
    [...families(text)].flatMap(([name, type]) =>
      type === 'histogram' ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
    ),
  );
}
