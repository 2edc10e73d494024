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
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { format: 'int-or-string', oneOf: [] },
  'x.Port': {
    type: 'object',
    properties: {
      port: { type: 'integer' },
      protocol: { type: 'string', default: 'TCP' },
      target: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString' },
    },
    required: ['port'],
  },
  'x.Ports': {
    type: 'object',
    properties: {
      ports: {
        type: 'array',
        items: { $ref: '#/components/schemas/x.Port' },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['port', 'protocol'],
      },
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

  it('makes an IntOrString int-or-string, and keeps the default of a list key that is not required', () => {
    const ports = (
      inline(all['x.Ports']!, all) as { properties: { ports: { items: { properties: Record<string, Json> } } } }
    ).properties.ports.items.properties;
    expect(ports.target).toEqual({
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
    });
    expect(ports.protocol).toEqual({ type: 'string', default: 'TCP' });
    expect(ports.port).toEqual({ type: 'integer' });
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

  it('podTemplate.spec carries a PodSpec with nothing required, without the fields the operator owns', () => {
    const podSpec = (spec.podTemplate as { properties: { spec: Json } }).properties.spec;
    const fields = Object.keys(podSpec.properties as object);
    expect(fields).toEqual(expect.arrayContaining(['tolerations', 'nodeSelector', 'containers', 'volumes']));
    for (const owned of ['hostname', 'subdomain', 'ephemeralContainers']) expect(fields).not.toContain(owned);
    expect(podSpec).not.toHaveProperty(['required']);
    expect(podSpec).not.toHaveProperty(['x-kubernetes-preserve-unknown-fields']);
  });

  // etcd refuses a request over 1.5 MiB (its --max-request-bytes default), and a CRD applied
  // server-side is stored with managedFields that name the fields of its schema again: half of
  // that for the CRD itself leaves room for them (the PodSpec is about 290 KB of it).
  it('fits where Kubernetes stores it: at most 768 KiB as the JSON the API server stores', () => {
    expect(JSON.stringify(crd).length).toBeLessThanOrEqual(768 * 1024);
  });
});
