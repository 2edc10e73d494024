import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeContext } from '../../../effects/kubernetes/context.ts';
import { growVolume } from '../../../effects/kubernetes/grow-volume.ts';
import { LABEL } from '../../../effects/kubernetes/meta.ts';
import type { EffectError } from '../../../effects/types.ts';

/** An API error as @kubernetes/client-node throws it: the status code, the Status object as the body. */
const apiError = (code: number, message: string) =>
  Object.assign(new Error(`HTTP-Code: ${code}`), { code, body: JSON.stringify({ kind: 'Status', message }) });

/**
 * The core API over one claim, answering a patch as the API server does: refused (403, the
 * PersistentVolumeClaimResize admission's words) while the class does not allow expansion.
 * Fake: no API server runs in unit tests (test/e2e/volume-expansion.test.ts uses the real one).
 */
function setup(o: { expandable: boolean; member?: string } = { expandable: true }) {
  const claims = new Map<string, V1PersistentVolumeClaim>([
    [
      'data-demo-1',
      {
        metadata: { name: 'data-demo-1', labels: { [LABEL.member]: o.member ?? 'demo-1' } },
        spec: { storageClassName: 'fixed', resources: { requests: { storage: '64Mi' } } },
      },
    ],
  ]);
  const patches: unknown[] = [];
  const core = {
    readNamespacedPersistentVolumeClaim: (r: { name: string }) => {
      const c = claims.get(r.name);
      return c ? Promise.resolve(structuredClone(c)) : Promise.reject(apiError(404, 'not found'));
    },
    patchNamespacedPersistentVolumeClaim: (r: { name: string; body: V1PersistentVolumeClaim }) => {
      patches.push(r.body);
      if (!o.expandable)
        return Promise.reject(
          apiError(
            403,
            `persistentvolumeclaims "${r.name}" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`,
          ),
        );
      const c = claims.get(r.name)!;
      c.spec!.resources!.requests = { storage: r.body.spec?.resources?.requests?.['storage'] ?? '' };
      return Promise.resolve(structuredClone(c));
    },
  };
  const ctx = {
    cluster: { namespace: 'ns', name: 'demo', uid: 'cluster-uid' },
    signal: new AbortController().signal,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    kube: { core },
  } as unknown as KubeContext;
  return { claims, patches, ctx };
}

const grow = { member: 'demo-1', size: '128Mi' };

describe('growVolume', () => {
  it('asks the claim for the size once: recover finds it asked, a repeated run patches nothing', async () => {
    const { claims, patches, ctx } = setup();
    expect(await growVolume.recover(grow, ctx)).toEqual({ done: false });
    expect(await growVolume.run(grow, ctx)).toEqual({ patched: true });
    expect(claims.get('data-demo-1')?.spec?.resources?.requests).toEqual({ storage: '128Mi' });
    expect(await growVolume.recover(grow, ctx)).toEqual({ done: true, result: { patched: true } });
    expect(await growVolume.run(grow, ctx)).toEqual({ patched: false });
    // A smaller size than it asks for (100M < 128Mi, across units) changes nothing either.
    expect(await growVolume.run({ member: 'demo-1', size: '100M' }, ctx)).toEqual({ patched: false });
    expect(patches).toHaveLength(1);
  });

  it('a claim that is gone is nothing to grow (its member is being replaced)', async () => {
    const { ctx } = setup();
    expect(await growVolume.run({ member: 'demo-9', size: '128Mi' }, ctx)).toEqual({ patched: false });
    expect(await growVolume.recover({ member: 'demo-9', size: '128Mi' }, ctx)).toEqual({
      done: true,
      result: { patched: false },
    });
  });

  it('a class that does not allow expansion fails for good, naming the class and what to do', async () => {
    const { ctx } = setup({ expandable: false });
    const err = await growVolume.run(grow, ctx).then(
      () => undefined,
      (e: EffectError) => e,
    );
    expect(err).toMatchObject({ code: 'ERR_VOLUME_EXPANSION_NOT_ALLOWED', retryable: false });
    expect(err?.message).toBe(
      `PersistentVolumeClaim data-demo-1 cannot grow to 128Mi: StorageClass fixed does not allow volume expansion. Set allowVolumeExpansion: true on it (kubectl patch storageclass fixed -p '{"allowVolumeExpansion":true}') if its provisioner can grow volumes`,
    );
  });

  it("never patches a claim by the name that is not the member's", async () => {
    const { patches, ctx } = setup({ expandable: true, member: 'someone-else' });
    await expect(growVolume.run(grow, ctx)).rejects.toMatchObject({ code: 'ERR_GROW_VOLUME', retryable: false });
    expect(patches).toEqual([]);
  });
});
