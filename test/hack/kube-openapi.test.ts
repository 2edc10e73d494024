/** Kubernetes' OpenAPI schemas made into what a CRD may embed (hack/kube-openapi.ts). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { inline, type Json } from '../../hack/kube-openapi.ts';

const all: Record<string, Json> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { description: 'a page of grammar', oneOf: [] },
  'x.Inner': {
    type: 'object',
    description: 'Inner.',
    properties: { name: { type: 'string', default: '' } },
    required: ['name'],
  },
  'x.Outer': {
    type: 'object',
    properties: {
      inner: { allOf: [{ $ref: '#/components/schemas/x.Inner' }], default: {}, description: 'The inner one.' },
      list: {
        type: 'array',
        items: { $ref: '#/components/schemas/x.Inner' },
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-list-type': 'atomic',
      },
      size: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity', description: 'How big.' },
    },
  },
  'x.Loop': { type: 'object', properties: { self: { $ref: '#/components/schemas/x.Loop' } } },
};

describe('kube-openapi: a Kubernetes schema inlined for a CRD', () => {
  it('inlines $refs (also wrapped in allOf), keeping the field description and dropping defaults and patch strategies', () => {
    const out = inline(all['x.Outer']!, all) as { properties: Record<string, Json> };
    expect(out.properties.inner).toEqual({
      type: 'object',
      description: 'The inner one.',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
    expect(out.properties.list).toEqual({
      type: 'array',
      items: { type: 'object', description: 'Inner.', properties: { name: { type: 'string' } }, required: ['name'] },
      'x-kubernetes-list-type': 'atomic',
    });
  });

  it('makes a quantity int-or-string with the quantity pattern and the field description only', () => {
    const size = (inline(all['x.Outer']!, all) as { properties: Record<string, Json> }).properties.size!;
    expect(size).toMatchObject({ 'x-kubernetes-int-or-string': true, description: 'How big.' });
    expect(new RegExp(size.pattern as string).test('256Mi')).toBe(true);
    expect(new RegExp(size.pattern as string).test('two cores')).toBe(false);
  });

  it('refuses a recursive schema rather than loop', () => {
    expect(() => inline(all['x.Loop']!, all)).toThrow('recursive schema x.Loop -> x.Loop');
  });
});

describe('EtcdCluster CRD: the embedded Kubernetes schemas', () => {
  const crd = parse(
    readFileSync(
      join(import.meta.dirname, '../../charts/etcd-operator/crds/etcd-operator.dev_etcdclusters.yaml'),
      'utf8',
    ),
  ) as {
    spec: {
      versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, Json> } } } } }[];
    };
  };
  const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties;

  it.each([
    ['resources', ['limits', 'requests', 'claims']],
    ['affinity', ['nodeAffinity', 'podAffinity', 'podAntiAffinity']],
  ])('%s carries its fields and takes no unknown ones', (field, names) => {
    expect(Object.keys((spec[field] as { properties: object }).properties)).toEqual(expect.arrayContaining(names));
    expect(spec[field]).not.toHaveProperty(['x-kubernetes-preserve-unknown-fields']);
  });

  it('topologySpreadConstraints items carry a TopologySpreadConstraint, topologyKey required', () => {
    const items = (spec.topologySpreadConstraints as { items: { required: string[]; properties: object } }).items;
    expect(items.required).toEqual(expect.arrayContaining(['topologyKey', 'maxSkew', 'whenUnsatisfiable']));
    expect(items).not.toHaveProperty(['x-kubernetes-preserve-unknown-fields']);
  });

  it('stays small: the CRD file under 256 KiB (no PodSpec inlined)', () => {
    const bytes = readFileSync(
      join(import.meta.dirname, '../../charts/etcd-operator/crds/etcd-operator.dev_etcdclusters.yaml'),
    ).length;
    expect(bytes).toBeLessThan(256 * 1024);
  });
});
