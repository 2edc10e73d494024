/** Sets a Pod's volumes up as host directories that its containers bind-mount at their mountPaths. */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { CoreV1Api, V1KeyToPath, V1Pod, V1Volume, V1VolumeProjection } from '@kubernetes/client-node';
import { writeAtomically, type PayloadFile } from './atomicWriter.ts';
import { fieldValue } from './env.ts';
import { VolumeError } from './errors.ts';
import { setVolumeOwnership } from './volumeOwnership.ts';

const run = promisify(execFile);

/** Where the cluster's CA, the API and the Pod's address come from. */
export interface VolumeContext {
  readonly core: CoreV1Api;
  readonly caData: string;
  readonly podIP: string;
  readonly hostIP: string;
}

/** The volumes of a Pod, set up: name -> host path, and what to undo when the Pod goes. */
export interface PodVolumes {
  readonly paths: Map<string, string>;
  /** Unmounts Memory emptyDirs and stops token refreshes. */
  close(): Promise<void>;
}

/** How often Secret and ConfigMap volumes are brought up to date. */
const refreshMs = 10_000;

/** Bytes of a Kubernetes quantity such as 64Mi or 1G. */
export function quantityBytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q.trim());
  if (!m) throw new VolumeError('emptyDir', `cannot read quantity ${q}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[m[2] ?? ''] ?? 1;
  return Math.ceil(Number(m[1]) * unit);
}

function pick(
  data: Record<string, Buffer>,
  items: V1KeyToPath[] | undefined,
  what: string,
): [string, Buffer, number | undefined][] {
  if (!items?.length) return Object.entries(data).map(([k, v]) => [k, v, undefined]);
  return items.map((it) => {
    const v = data[it.key];
    if (!v) throw new VolumeError(what, `key ${it.key} not found`);
    return [it.path, v, it.mode];
  });
}

/** Sets every volume of the Pod up under podDir; throws VolumeError while one cannot be yet. */
export async function setUpVolumes(pod: V1Pod, podDir: string, ctx: VolumeContext): Promise<PodVolumes> {
  const ns = pod.metadata!.namespace!;
  const security = pod.spec?.securityContext;
  const fsGroup = security?.fsGroup;
  // fsGroup on a volume that supports ownership management, as the kubelet applies it: the
  // Pod's fsGroupChangePolicy holds for emptyDirs and claims, the files the node writes always.
  const own = (dir: string, readOnly: boolean, policy?: string): void => {
    if (fsGroup !== undefined) setVolumeOwnership(dir, fsGroup, { readOnly, ...(policy ? { policy } : {}) });
  };
  const paths = new Map<string, string>();
  const tmpfs: string[] = [];
  const timers: NodeJS.Timeout[] = [];
  const keyData = async (
    kind: 'Secret' | 'ConfigMap',
    name: string,
    optional: boolean | undefined,
    vol: string,
  ): Promise<Record<string, Buffer>> => {
    try {
      if (kind === 'Secret') {
        const s = await ctx.core.readNamespacedSecret({ name, namespace: ns });
        return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
      }
      const c = await ctx.core.readNamespacedConfigMap({ name, namespace: ns });
      return Object.fromEntries([
        ...Object.entries(c.data ?? {}).map(([k, v]) => [k, Buffer.from(v)] as const),
        ...Object.entries(c.binaryData ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')] as const),
      ]);
    } catch (err) {
      if ((err as { code?: number }).code !== 404)
        throw new VolumeError(vol, `reading ${kind} ${name}`, { cause: err });
      if (kind === 'ConfigMap' && name === 'kube-root-ca.crt') return { 'ca.crt': Buffer.from(ctx.caData) };
      if (optional) return {};
      throw new VolumeError(vol, `${kind.toLowerCase()} "${name}" not found`);
    }
  };
  // Service account tokens by volume and path: fetched at set-up and again at 80% of their lifetime.
  const tokens = new Map<string, Buffer>();
  const token = async (
    key: string,
    src: NonNullable<V1VolumeProjection['serviceAccountToken']>,
    vol: string,
    rewrite: () => Promise<void>,
  ): Promise<Buffer> => {
    const expirationSeconds = src.expirationSeconds ?? 3607;
    const tr = await ctx.core
      .createNamespacedServiceAccountToken({
        name: pod.spec?.serviceAccountName ?? 'default',
        namespace: ns,
        body: {
          spec: {
            audiences: src.audience ? [src.audience] : [],
            expirationSeconds,
            boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.metadata!.name!, uid: pod.metadata!.uid! },
          },
        },
      })
      .catch((err: unknown) => {
        throw new VolumeError(
          vol,
          `requesting a token for service account ${pod.spec?.serviceAccountName ?? 'default'}`,
          { cause: err },
        );
      });
    const data = Buffer.from(tr.status?.token ?? '');
    tokens.set(key, data);
    // The kubelet renews at 80% of the lifetime; so do we, while the Pod lives.
    const renew = async (): Promise<void> => {
      await token(key, src, vol, rewrite);
      await rewrite();
    };
    const t = setTimeout(() => void renew().catch(() => undefined), expirationSeconds * 800);
    t.unref();
    timers.push(t);
    return data;
  };
  /** A projected (or downward API) volume's whole payload, written at once. */
  const projected = async (dir: string, sources: V1VolumeProjection[], vol: string, mode = 0o644): Promise<void> => {
    const files = new Map<string, PayloadFile>();
    const rewrite = (): Promise<void> => projected(dir, sources, vol, mode);
    for (const s of sources) {
      if (s.serviceAccountToken) {
        const p = s.serviceAccountToken.path ?? 'token';
        const key = join(dir, p);
        files.set(p, { data: tokens.get(key) ?? (await token(key, s.serviceAccountToken, vol, rewrite)), mode });
      }
      const ref = s.secret ?? s.configMap;
      if (ref) {
        const data = await keyData(s.secret ? 'Secret' : 'ConfigMap', ref.name!, ref.optional, vol);
        for (const [p, v, m] of pick(data, ref.items, vol)) files.set(p, { data: v, mode: m ?? mode });
      }
      for (const it of s.downwardAPI?.items ?? []) {
        if (it.fieldRef)
          files.set(it.path, { data: Buffer.from(fieldValue(pod, it.fieldRef.fieldPath, ctx)), mode: it.mode ?? mode });
      }
    }
    if (writeAtomically(dir, files, fsGroup)) own(dir, true);
  };
  const refreshers: (() => Promise<void>)[] = [];
  const undo = async (): Promise<void> => {
    for (const t of timers) clearTimeout(t);
    for (const dir of tmpfs) await run('umount', ['-l', dir]).catch(() => undefined);
  };
  try {
    for (const v of pod.spec?.volumes ?? []) paths.set(v.name, await setUp(v));
  } catch (err) {
    await undo(); // the next attempt starts from scratch (no tmpfs mounted twice)
    throw err;
  }
  // Like the kubelet's periodic sync: Secret and ConfigMap changes reach the files, all keys of
  // a version at once (writeAtomically); a deleted object leaves the last files in place.
  const refresh = setInterval(() => refreshers.forEach((r) => void r().catch(() => undefined)), refreshMs);
  refresh.unref();
  timers.push(refresh);
  async function setUp(v: V1Volume): Promise<string> {
    const dir = join(podDir, 'volumes', v.name);
    if (v.persistentVolumeClaim) {
      const path = await claimPath(ctx.core, ns, v.persistentVolumeClaim.claimName, v.name);
      // The node's claims are treated as a CSI volume's: fsGroup applies, unless mounted read-only.
      if (!v.persistentVolumeClaim.readOnly) own(path, false, security?.fsGroupChangePolicy);
      return path;
    }
    if (v.hostPath) {
      if (!v.hostPath.type || v.hostPath.type === 'DirectoryOrCreate') mkdirSync(v.hostPath.path, { recursive: true });
      return v.hostPath.path;
    }
    mkdirSync(dir, { recursive: true });
    if (v.emptyDir?.medium === 'Memory') {
      const size = v.emptyDir.sizeLimit ? `,size=${quantityBytes(v.emptyDir.sizeLimit)}` : '';
      await run('mount', ['-t', 'tmpfs', '-o', `mode=1777${size}`, 'tmpfs', dir]);
      tmpfs.push(dir);
    }
    if (v.emptyDir) own(dir, false, security?.fsGroupChangePolicy);
    const ref = v.secret
      ? {
          kind: 'Secret' as const,
          name: v.secret.secretName!,
          optional: v.secret.optional,
          items: v.secret.items,
          mode: v.secret.defaultMode,
        }
      : v.configMap
        ? {
            kind: 'ConfigMap' as const,
            name: v.configMap.name!,
            optional: v.configMap.optional,
            items: v.configMap.items,
            mode: v.configMap.defaultMode,
          }
        : undefined;
    if (ref) {
      const write = async (): Promise<void> => {
        const data = await keyData(ref.kind, ref.name, ref.optional, v.name);
        const files = new Map(
          pick(data, ref.items, v.name).map(([p, bytes, mode]) => [
            p,
            { data: bytes, mode: mode ?? ref.mode ?? 0o644 },
          ]),
        );
        if (writeAtomically(dir, files, fsGroup)) own(dir, true);
      };
      await write();
      refreshers.push(write);
    }
    if (v.projected) {
      const sources = v.projected.sources ?? [];
      const mode = v.projected.defaultMode ?? 0o644;
      await projected(dir, sources, v.name, mode);
      if (sources.some((x) => x.secret || x.configMap)) refreshers.push(() => projected(dir, sources, v.name, mode));
    }
    if (v.downwardAPI) await projected(dir, [{ downwardAPI: v.downwardAPI }], v.name, v.downwardAPI.defaultMode);
    return dir;
  }
  return {
    paths,
    async close() {
      await undo();
    },
  };
}

/** The host directory of the volume bound to a claim; VolumeError until the claim is Bound. */
async function claimPath(core: CoreV1Api, namespace: string, claim: string, vol: string): Promise<string> {
  const pvc = await core.readNamespacedPersistentVolumeClaim({ name: claim, namespace }).catch((err: unknown) => {
    throw new VolumeError(vol, `persistentvolumeclaim "${claim}" not found`, { cause: err });
  });
  if (pvc.status?.phase !== 'Bound' || !pvc.spec?.volumeName)
    throw new VolumeError(vol, `persistentvolumeclaim "${claim}" is not bound yet`);
  const pv = await core.readPersistentVolume({ name: pvc.spec.volumeName });
  const path = pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
  if (!path) throw new VolumeError(vol, `persistentvolume "${pv.metadata?.name}" is neither hostPath nor local`);
  mkdirSync(path, { recursive: true });
  return path;
}
