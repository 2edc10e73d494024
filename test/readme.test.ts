import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installCommands, withRegistry } from './e2e/readme.ts';

const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');

describe('README: Install on your Kubernetes', () => {
  const script = installCommands(readme);

  it('names the registry once, in REGISTRY, which the install e2e sets to the local one', () => {
    const local = withRegistry(script, '127.0.0.1:5000/e2e');
    expect(local).toContain('make push TO=$REGISTRY');
    expect(local).toContain('helm install etcd-operator oci://$REGISTRY/charts/etcd-operator');
    expect(local).toContain('--set image.repository=$REGISTRY/etcd-operator');
    expect(local).not.toMatch(/ghcr\.io|YOU/);
  });

  it('is one bash script from make image to kubectl describe, the example applied from a heredoc', () => {
    execFileSync('bash', ['-n'], { input: script });
    expect(script.split('\n')[1]).toMatch(/^make image\b/);
    expect(script).toContain("kubectl apply -f - <<'EOF'\napiVersion: etcd-operator.dev/v1alpha1\n");
    // Available comes with the seed alone (1 of 3): the install waits for every member ready too.
    expect(script).toMatch(
      /^kubectl wait --for=condition=Available etcdcluster\/demo .*\nkubectl wait --for=jsonpath='\{\.status\.readyMembers\}'=3 etcdcluster\/demo /m,
    );
    expect(script.trimEnd().split('\n').at(-1)).toMatch(/^kubectl describe etcdcluster demo\b/);
  });
});
