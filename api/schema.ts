/**
 * A small schema language: the one source from which the CRD YAML (OpenAPI v3 with CEL
 * rules), the TypeScript types and docs/api.md are all generated (api/generate.ts).
 * Every node carries a description because `kubectl explain` prints it.
 */
import { kubeSchema } from './kube-schemas.ts';

/** A CEL rule checked by the API server (`x-kubernetes-validations`). */
export interface Rule {
  readonly rule: string;
  readonly message: string;
  /** Path the error is reported at, relative to the node (for rules on a parent object). */
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

interface Common {
  readonly description: string;
  readonly default?: unknown;
  readonly rules?: readonly Rule[];
}

/** A node of the schema tree. */
export type Schema =
  | (Common & {
      readonly type: 'string';
      readonly enum?: readonly string[];
      readonly pattern?: string;
      readonly format?: 'date-time';
      readonly minLength?: number;
      readonly maxLength?: number;
    })
  | (Common & {
      readonly type: 'integer';
      readonly format?: 'int32' | 'int64';
      readonly minimum?: number;
      readonly maximum?: number;
    })
  | (Common & { readonly type: 'boolean' })
  | (Common & { readonly type: 'quantity' })
  | (Common & { readonly type: 'map'; readonly values: Schema })
  | (Common & {
      readonly type: 'array';
      readonly items: Schema;
      readonly maxItems?: number;
      readonly listType?: 'atomic' | 'set' | 'map';
      readonly listMapKeys?: readonly string[];
    })
  | (Common & {
      readonly type: 'object';
      /** Named objects become their own interface and their own section in the docs. */
      readonly name?: string;
      readonly properties: Readonly<Record<string, Schema>>;
      readonly required?: readonly string[];
    })
  | (Common & {
      readonly type: 'external';
      /** A Kubernetes type the API server validates when it reaches a Pod (kept as-is here). */
      readonly tsType: string;
      readonly array?: boolean;
    });

/** An object node. */
export type ObjectSchema = Extract<Schema, { type: 'object' }>;

type Opts<T extends Schema['type']> = Omit<Extract<Schema, { type: T }>, 'type' | 'description'>;

/** Builders: `s.string('what it is', { ...options })`. */
export const s = {
  string: (description: string, o: Opts<'string'> = {}): Schema => ({ type: 'string', description, ...o }),
  integer: (description: string, o: Opts<'integer'> = {}): Schema => ({ type: 'integer', description, ...o }),
  boolean: (description: string, o: Opts<'boolean'> = {}): Schema => ({ type: 'boolean', description, ...o }),
  quantity: (description: string, o: Opts<'quantity'> = {}): Schema => ({ type: 'quantity', description, ...o }),
  map: (description: string, values: Schema, o: Omit<Opts<'map'>, 'values'> = {}): Schema => ({
    type: 'map',
    description,
    values,
    ...o,
  }),
  array: (description: string, items: Schema, o: Omit<Opts<'array'>, 'items'> = {}): Schema => ({
    type: 'array',
    description,
    items,
    ...o,
  }),
  object: (
    description: string,
    properties: Record<string, Schema>,
    o: Omit<Opts<'object'>, 'properties'> = {},
  ): ObjectSchema => ({
    type: 'object',
    description,
    properties,
    ...o,
  }),
  external: (description: string, tsType: string, o: Omit<Opts<'external'>, 'tsType'> = {}): Schema => ({
    type: 'external',
    description,
    tsType,
    ...o,
  }),
};

/** A printer column of `kubectl get`. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'date' | 'boolean';
  readonly jsonPath: string;
  readonly description: string;
  readonly priority?: number;
}

/** One custom resource kind: everything its CRD, types and docs are made of. */
export interface Kind {
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly description: string;
  readonly spec: ObjectSchema;
  readonly status: ObjectSchema;
  /** Rules on the whole object; CEL there may read `self.metadata.name`. */
  readonly rules?: readonly Rule[];
  readonly printerColumns: readonly PrinterColumn[];
  readonly scale?: {
    readonly specReplicasPath: string;
    readonly statusReplicasPath: string;
    readonly labelSelectorPath: string;
  };
}

/** The API group and version every kind here belongs to. */
export const group = 'etcd-operator.dev';
export const version = 'v1alpha1';

/** OpenAPI v3 (structural) for one node, as the CRD carries it. */
export function toOpenAPI(node: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  switch (node.type) {
    case 'string':
      out.type = 'string';
      copy(out, node, ['enum', 'pattern', 'format', 'minLength', 'maxLength']);
      break;
    case 'integer':
      out.type = 'integer';
      copy(out, node, ['format', 'minimum', 'maximum']);
      break;
    case 'boolean':
      out.type = 'boolean';
      break;
    case 'quantity':
      out['x-kubernetes-int-or-string'] = true;
      out.anyOf = [{ type: 'integer' }, { type: 'string' }];
      break;
    case 'map':
      out.type = 'object';
      out.additionalProperties = toOpenAPI(node.values);
      break;
    case 'array':
      out.type = 'array';
      out.items = toOpenAPI(node.items);
      copy(out, node, ['maxItems']);
      if (node.listType) out['x-kubernetes-list-type'] = node.listType;
      if (node.listMapKeys) out['x-kubernetes-list-map-keys'] = node.listMapKeys;
      break;
    case 'object':
      out.type = 'object';
      out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, toOpenAPI(v)]));
      if (node.required?.length) out.required = node.required;
      break;
    case 'external': {
      // The Kubernetes schema when api/kubernetes has it: explained by kubectl, typos refused.
      // Partial<V1PodSpec>: the schema of V1PodSpec with nothing required (podTemplate overrides).
      const partial = /^Partial<(.*)>$/.exec(node.tsType);
      const full = kubeSchema(partial ? partial[1]! : node.tsType);
      const known = full && partial ? withoutRequired(full) : full;
      if (known && node.array) {
        out.type = 'array';
        out.items = known;
      } else if (known) Object.assign(out, known);
      else if (node.array) {
        out.type = 'array';
        out.items = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      } else {
        out.type = 'object';
        out['x-kubernetes-preserve-unknown-fields'] = true;
      }
      break;
    }
  }
  out.description = node.description;
  if (node.default !== undefined) out.default = node.default;
  const rules = node.type === 'quantity' ? [QUANTITY_RULE, ...(node.rules ?? [])] : (node.rules ?? []);
  if (rules.length) out['x-kubernetes-validations'] = rules.map((r) => ({ ...r }));
  return out;
}

/**
 * Every quantity is checked by CEL rather than by Kubernetes' quantity regex, whose message
 * quotes the regex. A quantity's own rules must hold only for quantities: `!isQuantity(..) || ..`.
 */
export const QUANTITY_RULE: Rule = {
  rule: 'isQuantity(string(self))',
  message: 'must be a quantity, such as 1Gi or 512Mi',
};

function withoutRequired(schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { required: _, ...rest } = schema;
  return rest;
}

function copy(out: Record<string, unknown>, node: object, keys: readonly string[]): void {
  for (const k of keys) {
    const v = (node as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = v;
  }
}
