import { describe, expect, it } from 'vitest';
import type { V1Container, V1PodSecurityContext } from '@kubernetes/client-node';
import { asIdentity, containerIdentity, isRoot, ROOT, setprivArgs } from './securityContext.ts';

const restrictedPod: V1PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  fsGroup: 65532,
  seccompProfile: { type: 'RuntimeDefault' },
};
const restrictedContainer: V1Container = {
  name: 'etcd',
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
};

describe('node: the identity a securityContext gives a container', () => {
  it('is plain root without a securityContext, so the command is exec’d as before', () => {
    const id = containerIdentity(undefined, { name: 'c' });
    expect(id).toEqual(ROOT);
    expect(isRoot(id)).toBe(true);
    expect(asIdentity(id, ['etcdctl', 'endpoint', 'health'])).toEqual(['etcdctl', 'endpoint', 'health']);
  });

  it('takes uid, gid and fsGroup from the Pod, no_new_privs and dropped capabilities from the container', () => {
    const id = containerIdentity(restrictedPod, restrictedContainer);
    expect(id).toEqual({ uid: 65532, gid: 65532, groups: [65532], noNewPrivs: true, drop: ['all'] });
    expect(setprivArgs(id)).toEqual([
      '--reuid=65532',
      '--regid=65532',
      '--groups=65532',
      '--no-new-privs',
      '--inh-caps=-all',
      '--bounding-set=-all',
    ]);
    expect(asIdentity(id, ['id'])).toEqual(['setpriv', ...setprivArgs(id), '--', 'id']);
  });

  it("a container's runAsUser and runAsGroup win over the Pod's; supplementalGroups join fsGroup once", () => {
    const id = containerIdentity(
      { ...restrictedPod, supplementalGroups: [65532, 1000] },
      {
        name: 'c',
        securityContext: { runAsUser: 1001, runAsGroup: 1002, capabilities: { drop: ['NET_RAW', 'CAP_CHOWN'] } },
      },
    );
    expect(id).toMatchObject({
      uid: 1001,
      gid: 1002,
      groups: [65532, 1000],
      noNewPrivs: false,
      drop: ['net_raw', 'chown'],
    });
    expect(setprivArgs(id)).toContain('--bounding-set=-net_raw,-chown');
  });

  it('without runAsGroup the gid is 0, and without any group the supplementary groups are cleared', () => {
    const id = containerIdentity({ runAsUser: 1000 }, { name: 'c' });
    expect(id).toEqual({ uid: 1000, gid: 0, groups: [], noNewPrivs: false, drop: [] });
    expect(setprivArgs(id)).toEqual(['--reuid=1000', '--regid=0', '--clear-groups']);
  });

  it('refuses runAsNonRoot with uid 0 in the kubelet’s words', () => {
    expect(() => containerIdentity({ runAsNonRoot: true }, { name: 'etcd' }, 'demo-0_ns(u1)')).toThrow(
      'container has runAsNonRoot and image will run as root (pod: "demo-0_ns(u1)", container: etcd)',
    );
    expect(() =>
      containerIdentity({ runAsNonRoot: true }, { name: 'etcd', securityContext: { runAsUser: 0 } }, 'p'),
    ).toThrow(/container's runAsUser breaks non-root policy/);
    expect(() => containerIdentity({ runAsNonRoot: true }, { name: 'etcd' })).toThrow(
      expect.objectContaining({ code: 'ERR_CONFIG' }),
    );
  });
});
