/**
 * The Kubernetes schemas the CRDs embed for `resources`, `affinity` and `topologySpreadConstraints`,
 * read from a real kube-apiserver's /openapi/v3 (the project's pinned one, started alone on loopback
 * in a temporary dir, or the one of --kubeconfig), with every $ref inlined, and written to
 * api/kubernetes/core-v1.json, which is checked in; `make generate` then renders the CRDs from it.
 *
 *   node hack/kube-schemas.ts [--kubeconfig PATH]
 *
 * Only the types listed in TYPES (PodSpec without the fields OMIT names). Quantities become int-or-string
 * with Kubernetes' quantity pattern; patch strategies and the `default: {}` of $ref wrappers are dropped
 * (a CRD has no strategic merge, and a default would fill fields the user left out).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { startControlPlane } from '../localcluster/controlplane/index.ts';
import { kubectlPath } from '../localcluster/controlplane/kubectl.ts';
import { inline, OMIT, TYPES, type Json } from './kube-openapi.ts';

async function openapi(kubeconfig: string): Promise<{ version: string; schemas: Record<string, Json> }> {
  const kubectl = await kubectlPath();
  const raw = async (path: string) =>
    (await promisify(execFile)(kubectl, ['--kubeconfig', kubeconfig, 'get', '--raw', path], { maxBuffer: 64 << 20 }))
      .stdout;
  const version = (JSON.parse(await raw('/version')) as { gitVersion: string }).gitVersion;
  const doc = JSON.parse(await raw('/openapi/v3/api/v1')) as { components: { schemas: Record<string, Json> } };
  return { version, schemas: doc.components.schemas };
}

/** schema without the named properties. */
function omit(schema: Json, fields: readonly string[]): Json {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (!properties || fields.length === 0) return schema;
  return { ...schema, properties: Object.fromEntries(Object.entries(properties).filter(([p]) => !fields.includes(p))) };
}

const out = join(import.meta.dirname, '..', 'api', 'kubernetes', 'core-v1.json');
const { values } = parseArgs({ options: { kubeconfig: { type: 'string' } } });
let stop = async () => {};
let kubeconfig = values.kubeconfig;
if (!kubeconfig) {
  const dir = mkdtempSync(join(tmpdir(), 'etcd-operator-kube-schemas-'));
  const cp = await startControlPlane({ dir, controllerManager: false, scheduler: false });
  kubeconfig = cp.kubeconfigPath;
  stop = async () => {
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
try {
  const { version, schemas } = await openapi(kubeconfig);
  const inlined = Object.fromEntries(
    Object.entries(TYPES).map(([ts, name]) => [ts, omit(inline(schemas[name]!, schemas), OMIT[ts] ?? [])]),
  );
  const file = {
    $comment: `Written by hack/kube-schemas.ts from kube-apiserver ${version} /openapi/v3/api/v1. Do not edit.`,
    schemas: inlined,
  };
  writeFileSync(out, `${JSON.stringify(file, null, 2)}\n`);
  console.log(`kube-schemas: wrote api/kubernetes/core-v1.json from ${version} (${Object.keys(TYPES).join(', ')})`);
} finally {
  await stop();
}
