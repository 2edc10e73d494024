/**
 * Sums up a V8 heap snapshot (`.heapsnapshot`, as `node --heapsnapshot-signal` writes it): the
 * shallow size and count per constructor, and the objects that retain the most (their retained
 * size from the dominator tree, weak edges ignored), each with the path that holds it.
 * Run: node test/bench/heap-summary.ts FILE [TOP]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: string[];
      readonly node_types: [string[], ...unknown[]];
      readonly edge_fields: string[];
      readonly edge_types: [string[], ...unknown[]];
    };
  };
  readonly nodes: number[];
  readonly edges: number[];
  readonly strings: string[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: heap-summary.ts FILE [TOP]');
const top = Number(process.argv[3] ?? 25);
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const { meta } = snap.snapshot;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const [nType, nName, nSelf, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
  meta.node_fields.indexOf(f),
) as [number, number, number, number];
const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [
  number,
  number,
  number,
];
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const WEAK = edgeTypes.indexOf('weak');
const SHORTCUT = edgeTypes.indexOf('shortcut');
const { nodes, edges, strings } = snap;
const count = nodes.length / NF;

const firstEdge = new Uint32Array(count + 1);
for (let i = 0, e = 0; i < count; i++) {
  firstEdge[i] = e;
  e += nodes[i * NF + nEdges]! * EF;
  firstEdge[i + 1] = e;
}
const label = (i: number): string => {
  const type = nodeTypes[nodes[i * NF + nType]!] ?? '?';
  const name = strings[nodes[i * NF + nName]!] ?? '';
  return type === 'object' || type === 'native' ? name : `(${type}) ${name.slice(0, 60)}`;
};
const edgeName = (e: number): string => {
  const type = edgeTypes[edges[e + eType]!];
  const n = edges[e + eName]!;
  return type === 'element' || type === 'hidden' ? `[${n}]` : (strings[n] ?? '?');
};
const strong = (e: number): boolean => edges[e + eType] !== WEAK && edges[e + eType] !== SHORTCUT;

// Depth-first postorder from the root (node 0) over strong edges; predecessors for the dominators.
const order = new Int32Array(count).fill(-1);
const postorder: number[] = [];
const parentEdge = new Int32Array(count).fill(-1);
const parentNode = new Int32Array(count).fill(-1);
const stack: number[] = [0];
const cursor = new Uint32Array(count);
order[0] = -2;
while (stack.length > 0) {
  const v = stack[stack.length - 1]!;
  const e = firstEdge[v]! + cursor[v]! * EF;
  if (e < firstEdge[v + 1]!) {
    cursor[v]! += 1;
    if (!strong(e)) continue;
    const w = edges[e + eTo]! / NF;
    if (order[w] === -1) {
      order[w] = -2;
      parentEdge[w] = e;
      parentNode[w] = v;
      stack.push(w);
    }
    continue;
  }
  stack.pop();
  order[v] = postorder.length;
  postorder.push(v);
}
const preds: number[][] = Array.from({ length: count }, () => []);
for (let v = 0; v < count; v++) {
  if (order[v]! < 0) continue;
  for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e += EF) if (strong(e)) preds[edges[e + eTo]! / NF]!.push(v);
}

// Cooper, Harvey and Kennedy's iterative dominators, over the postorder.
const idom = new Int32Array(count).fill(-1);
idom[0] = 0;
const intersect = (a: number, b: number): number => {
  while (a !== b) {
    while (order[a]! < order[b]!) a = idom[a]!;
    while (order[b]! < order[a]!) b = idom[b]!;
  }
  return a;
};
for (let changed = true; changed;) {
  changed = false;
  for (let i = postorder.length - 2; i >= 0; i--) {
    const v = postorder[i]!;
    let d = -1;
    for (const p of preds[v]!) if (idom[p] !== -1) d = d === -1 ? p : intersect(p, d);
    if (d !== -1 && idom[v] !== d) {
      idom[v] = d;
      changed = true;
    }
  }
}
const retained = new Float64Array(count);
for (const v of postorder) {
  retained[v]! += nodes[v * NF + nSelf]!;
  if (v !== 0) retained[idom[v]!]! += retained[v]!;
}

const byConstructor = new Map<string, { count: number; self: number }>();
for (let i = 0; i < count; i++) {
  const k = label(i);
  const c = byConstructor.get(k) ?? { count: 0, self: 0 };
  c.count += 1;
  c.self += nodes[i * NF + nSelf]!;
  byConstructor.set(k, c);
}
const mib = (b: number): string => (b / 1048576).toFixed(1);
/** The path from a GC root to a node, by the edges the depth-first walk took. */
const pathTo = (v: number): string => {
  const parts: string[] = [];
  for (let n = v; parentEdge[n]! >= 0 && parts.length < 8;) {
    const e = parentEdge[n]!;
    parts.unshift(edgeName(e));
    n = parentNode[n]!;
  }
  return parts.join('.');
};

console.log(`${file}: ${count} nodes, ${mib(retained[0]!)} MiB reachable`);
console.log(`\nshallow size by constructor (top ${top}):\n| constructor | count | MiB |\n| --- | ---: | ---: |`);
for (const [k, c] of [...byConstructor].sort((a, b) => b[1].self - a[1].self).slice(0, top))
  console.log(`| ${k.replaceAll('|', '/')} | ${c.count} | ${mib(c.self)} |`);

// Retained size summed per constructor, counting only objects no other object of that constructor dominates.
const retainedBy = new Map<string, { count: number; retained: number; example: number }>();
for (let v = 1; v < count; v++) {
  if (order[v]! < 0) continue;
  const k = label(v);
  let d = idom[v]!;
  while (d !== 0 && label(d) !== k) d = idom[d]!;
  if (d !== 0) continue;
  const c = retainedBy.get(k) ?? { count: 0, retained: 0, example: v };
  c.count += 1;
  c.retained += retained[v]!;
  if (retained[v]! > retained[c.example]!) c.example = v;
  retainedBy.set(k, c);
}
console.log(`\nretained size by constructor (top ${top}; nested ones counted once):`);
console.log('| constructor | count | MiB retained | largest held at |\n| --- | ---: | ---: | --- |');
for (const [k, c] of [...retainedBy].sort((a, b) => b[1].retained - a[1].retained).slice(0, top))
  console.log(`| ${k.replaceAll('|', '/')} | ${c.count} | ${mib(c.retained)} | ${pathTo(c.example).slice(0, 120)} |`);
