/** Kubernetes OpenAPI v3 schemas made into what a CRD embeds: $refs inlined, the structural subset kept (hack/kube-schemas.ts). */

/** The client-node type name each embedded schema is known by -> its OpenAPI name. */
export const TYPES: Readonly<Record<string, string>> = {
  V1ResourceRequirements: 'io.k8s.api.core.v1.ResourceRequirements',
  V1Affinity: 'io.k8s.api.core.v1.Affinity',
  V1TopologySpreadConstraint: 'io.k8s.api.core.v1.TopologySpreadConstraint',
  V1PodSpec: 'io.k8s.api.core.v1.PodSpec',
};
/**
 * Fields left out of an embedded schema, so a user who sets one is refused by the API server rather
 * than surprised later: a member Pod's hostname and subdomain are its identity in the cluster and
 * always the operator's, and ephemeral containers cannot be set when a Pod is created (every member
 * Pod would be refused).
 */
export const OMIT: Readonly<Record<string, readonly string[]>> = {
  V1PodSpec: ['ephemeralContainers', 'hostname', 'subdomain'],
};
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
/** A port (a number or a name): a CRD says it with x-kubernetes-int-or-string, not oneOf. */
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
/** Kubernetes' quantity syntax, as controller-gen writes it. */
const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const KEEP = new Set([
  'type',
  'format',
  'description',
  'properties',
  'required',
  'items',
  'additionalProperties',
  'enum',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
]);

export type Json = Record<string, unknown>;

/** One schema with its $refs inlined, in the subset a CRD's structural schema takes. */
export function inline(node: Json, all: Readonly<Record<string, Json>>, seen: readonly string[] = []): Json {
  const ref = (node.$ref ?? (node.allOf as Json[] | undefined)?.[0]?.$ref) as string | undefined;
  if (ref) {
    const name = ref.replace('#/components/schemas/', '');
    if (seen.includes(name)) throw new Error(`recursive schema ${[...seen, name].join(' -> ')}`);
    const target =
      name === QUANTITY
        ? {
            anyOf: [{ type: 'integer' }, { type: 'string' }],
            pattern: QUANTITY_PATTERN,
            'x-kubernetes-int-or-string': true,
          }
        : name === INT_OR_STRING
          ? { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true }
          : inline(all[name]!, all, [...seen, name]);
    // A quantity's own description is a page of grammar, repeated at every use: the field's will do.
    const description = name === QUANTITY ? node.description : (node.description ?? target.description);
    return { ...target, ...(description ? { description } : {}) };
  }
  const res: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (!KEEP.has(k)) continue;
    if (k === 'properties')
      res[k] = Object.fromEntries(Object.entries(v as Record<string, Json>).map(([p, s]) => [p, inline(s, all, seen)]));
    else if (k === 'items' || (k === 'additionalProperties' && typeof v === 'object'))
      res[k] = inline(v as Json, all, seen);
    else res[k] = v;
  }
  return withKeyDefaults(res, node, all);
}

/**
 * A list keyed by a field that is not required needs that field's default (a container port's
 * protocol, TCP; a pull Secret's name, ""), which the structural subset otherwise drops.
 */
function withKeyDefaults(res: Json, node: Json, all: Readonly<Record<string, Json>>): Json {
  const keys = res['x-kubernetes-list-map-keys'] as string[] | undefined;
  const items = res.items as Json | undefined;
  const ref = ((node.items as Json | undefined)?.$ref ?? '') as string;
  const raw = all[ref.replace('#/components/schemas/', '')]?.properties as Record<string, Json> | undefined;
  if (!keys || !items || !raw) return res;
  const required = (items.required as string[] | undefined) ?? [];
  const properties = { ...(items.properties as Record<string, Json>) };
  for (const key of keys)
    if (!required.includes(key) && raw[key]?.default !== undefined)
      properties[key] = { ...properties[key], default: raw[key].default };
  return { ...res, items: { ...items, properties } };
}
