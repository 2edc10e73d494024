/** The Kubernetes schemas some fields embed (hack/kube-schemas.ts writes api/kubernetes/core-v1.json from an API server). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const file = join(import.meta.dirname, 'kubernetes', 'core-v1.json');
const schemas: Readonly<Record<string, Record<string, unknown>>> = existsSync(file)
  ? (JSON.parse(readFileSync(file, 'utf8')) as { schemas: Record<string, Record<string, unknown>> }).schemas
  : {};

/** The OpenAPI schema of a client-node type (`V1Affinity`), if hack/kube-schemas.ts wrote one. */
export function kubeSchema(tsType: string): Readonly<Record<string, unknown>> | undefined {
  return schemas[tsType];
}
