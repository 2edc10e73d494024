import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BUSYBOX_IMAGE } from '../images.ts';
import { localPathConfig, standardClass } from './localPath.ts';
import { isClaimDir } from './wipeVolume.ts';

describe('local-path-provisioner as the local cluster runs it', () => {
  it('gives each node a directory of its own, and a node not listed (one a test adds) another', () => {
    const config = localPathConfig('/c/local-path/nodes', ['node-a', 'node-b']);
    expect(JSON.parse(config.data?.['config.json'] ?? '')).toEqual({
      nodePathMap: [
        { node: 'node-a', paths: ['/c/local-path/nodes/node-a'] },
        { node: 'node-b', paths: ['/c/local-path/nodes/node-b'] },
        { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/c/local-path/nodes/other'] },
      ],
    });
  });

  it("its helper Pods run the registry's BusyBox, which has the sh, mkdir and rm its scripts call", () => {
    const config = localPathConfig('/c', ['node-a']);
    const pod = parse(config.data?.['helperPod.yaml'] ?? '') as { spec: { containers: { image: string }[] } };
    expect(pod.spec.containers.map((c) => c.image)).toEqual([BUSYBOX_IMAGE]);
    expect(config.data?.['setup']).toContain('mkdir -m 0777 -p "$VOL_DIR"');
    expect(config.data?.['teardown']).toContain('rm -rf "$VOL_DIR"');
  });

  it("is the default class standard, kind's: a volume of the first consumer's node, deleted with its claim, not growable", () => {
    expect(standardClass()).toMatchObject({
      metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'rancher.io/local-path',
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    expect(standardClass().allowVolumeExpansion).toBeUndefined();
  });

  it("wipe finds a claim's directory by either provisioner's naming, and no other claim's", () => {
    const uid = '0b1c';
    expect(isClaimDir(`/c/volumes/${uid}`, uid)).toBe(true);
    expect(isClaimDir(`/c/nodes/node-a/pvc-${uid}_ns_data-demo-0`, uid)).toBe(true);
    expect(isClaimDir(`/c/nodes/node-a/pvc-${uid}9_ns_data-demo-0`, uid)).toBe(false);
    expect(isClaimDir('/c/nodes/node-a/pvc-_ns_x', '')).toBe(false);
  });
});
