import { describe, expect, it } from 'vitest';
import { pinnedRelease, wrapperRequires } from './tools.ts';

describe('pinnedRelease', () => {
  it('reads the release a wrapper module requires, direct or indirect (a tool directive)', () => {
    expect(pinnedRelease('cert-manager', 'github.com/cert-manager/cert-manager')).toMatch(/^v1\.\d+\.\d+$/);
    // versitygw's wrapper names it in a `tool` line, so its require is marked indirect.
    expect(pinnedRelease('versitygw', 'github.com/versity/versitygw')).toMatch(/^v\d+\.\d+\.\d+$/);
  });

  it('refuses a module the wrapper does not require, a prefix of one it does among them', () => {
    expect(() => pinnedRelease('versitygw', 'github.com/versity/versity')).toThrow(/does not require/);
  });
});

/**
 * The wrapper modules whose builds share packages (docs/development.md, "One version of the shared
 * dependencies"): Go's build cache compiles a package once for all of them only when it and its
 * dependencies are at the same versions in each, so they require every module they share at one.
 */
const SHARING = [
  'k8s',
  'prometheus',
  'cert-manager',
  'coredns',
  'helm',
  'versitygw',
  'registry',
  'containerd',
  'crictl',
  'local-path-provisioner',
];

/** What a wrapper keeps at its own version: client-go v0.30 and the modules it was built with. */
const OWN: Record<string, string[]> = {
  'local-path-provisioner': [
    'k8s.io/api',
    'k8s.io/apimachinery',
    'k8s.io/client-go',
    'k8s.io/klog/v2',
    'k8s.io/kube-openapi',
    'k8s.io/utils',
    'github.com/google/gnostic-models',
    'github.com/go-openapi/jsonpointer',
    'github.com/go-openapi/jsonreference',
    'github.com/go-openapi/swag',
    'sigs.k8s.io/json',
    'sigs.k8s.io/yaml',
  ],
};

describe('the wrapper modules build tools share', () => {
  it('require each module they share at one version (bumping a tool: raise the others to match)', () => {
    const versions = new Map<string, Map<string, string[]>>();
    for (const wrapper of SHARING)
      for (const [module, version] of wrapperRequires(wrapper)) {
        if (OWN[wrapper]?.includes(module)) continue;
        const byVersion = versions.get(module) ?? new Map<string, string[]>();
        byVersion.set(version, [...(byVersion.get(version) ?? []), wrapper]);
        versions.set(module, byVersion);
      }
    const apart = [...versions]
      .filter(([, byVersion]) => byVersion.size > 1)
      .map(
        ([module, byVersion]) => `${module}: ${[...byVersion].map(([v, ws]) => `${v} (${ws.join(', ')})`).join(', ')}`,
      );
    expect(apart).toEqual([]);
  });
});
