import { describe, expect, it } from 'vitest';
import { duration, parse, UsageError } from '../../plugin/args.ts';

describe('kubectl etcd: arguments', () => {
  it('takes NAME and the flags kubectl users type, in any order', () => {
    const c = parse(['status', '-n', 'prod', 'demo', '--kubeconfig', 'k.yaml', '--context', 'east', '-o', 'json']);
    expect(c).toMatchObject({
      command: 'status',
      name: 'demo',
      namespace: 'prod',
      kubeconfig: 'k.yaml',
      context: 'east',
      output: 'json',
    });
  });

  it('leaves the namespace to the kubeconfig when -n is not given, and finds the manager where the chart puts it', () => {
    const c = parse(['why', 'demo']);
    expect(c).toMatchObject({
      namespace: undefined,
      operatorNamespace: 'etcd-operator-system',
      operatorService: 'etcd-operator',
      output: 'text',
    });
    const moved = parse(['why', 'demo'], {
      KUBECTL_ETCD_OPERATOR_NAMESPACE: 'ops',
      KUBECTL_ETCD_OPERATOR_SERVICE: 'eo',
    });
    expect(moved).toMatchObject({ operatorNamespace: 'ops', operatorService: 'eo' });
    expect(
      parse(['why', 'demo', '--operator-namespace', 'x'], { KUBECTL_ETCD_OPERATOR_NAMESPACE: 'ops' }),
    ).toMatchObject({
      operatorNamespace: 'x',
    });
  });

  it('refuses what a command does not take, a missing NAME, a second NAME and unknown output', () => {
    expect(() => parse(['status'])).toThrow(/status: NAME is missing/);
    expect(() => parse(['status', 'a', 'b'])).toThrow(/one NAME expected, got a b/);
    expect(() => parse(['status', 'demo', '--pvc', 'x'])).toThrow(/status does not take --pvc/);
    expect(() => parse(['status', 'demo', '-o', 'wide'])).toThrow(/-o must be json or yaml, not wide/);
    expect(() => parse(['frobnicate', 'demo'])).toThrow(/unknown command 'frobnicate' \(one of status, snapshot/);
    expect(() => parse(['status', 'demo', '--bogus'])).toThrow(UsageError);
  });

  it('help: no words, help, --help, or COMMAND --help', () => {
    expect(parse([])).toMatchObject({ command: 'help' });
    expect(parse(['--help'])).toMatchObject({ command: 'help' });
    expect(parse(['snapshot', '--help'])).toMatchObject({ command: 'help', topic: 'snapshot' });
  });

  it('snapshot: a PVC or an S3 destination from flags, or none (found later)', () => {
    expect(parse(['snapshot', 'demo', '--pvc', 'backups/etcd/nightly'])).toMatchObject({
      destination: { pvc: { claimName: 'backups', subPath: 'etcd/nightly' } },
    });
    expect(
      parse([
        'snapshot',
        'demo',
        '--s3',
        's3://bucket/etcd/',
        '--s3-credentials',
        's3-keys',
        '--s3-endpoint',
        'http://s3.svc:7070',
        '--s3-path-style',
      ]),
    ).toMatchObject({
      destination: {
        s3: {
          bucket: 'bucket',
          keyPrefix: 'etcd/',
          endpoint: 'http://s3.svc:7070',
          forcePathStyle: true,
          credentialsSecretRef: { name: 's3-keys' },
        },
      },
    });
    expect(parse(['snapshot', 'demo'])).toMatchObject({ destination: undefined, like: undefined, wait: true });
    expect(parse(['snapshot', 'demo', '--no-wait', '--timeout', '90s'])).toMatchObject({
      wait: false,
      timeoutMs: 90_000,
    });
  });

  it('snapshot: says how to give a destination that does not parse', () => {
    expect(() => parse(['snapshot', 'demo', '--s3', 'bucket'])).toThrow(/--s3 must be s3:\/\/BUCKET/);
    expect(() => parse(['snapshot', 'demo', '--s3', 's3://b'])).toThrow(/needs --s3-credentials SECRET/);
    expect(() => parse(['snapshot', 'demo', '--s3-endpoint', 'http://x'])).toThrow(/go with --s3/);
    expect(() => parse(['snapshot', 'demo', '--pvc', 'c', '--like', 's'])).toThrow(/--like or a destination/);
    expect(() => parse(['snapshot', 'demo', '--deletion-policy', 'Keep'])).toThrow(/Delete or Retain/);
  });

  it('restore: SNAPSHOT and --to; YAML unless applied', () => {
    expect(parse(['restore', 'nightly-1', '--to', 'demo2'])).toMatchObject({
      command: 'restore',
      snapshot: 'nightly-1',
      to: 'demo2',
      apply: false,
      output: 'yaml',
    });
    expect(parse(['restore', 'nightly-1', '--to', 'demo2', '--apply', '--replicas', '1'])).toMatchObject({
      apply: true,
      output: 'text',
      replicas: 1,
    });
    expect(() => parse(['restore', 'nightly-1'])).toThrow(/--to NAME is missing/);
    expect(() => parse(['restore', 's', '--to', 'x', '--replicas', 'three'])).toThrow(
      /--replicas must be a whole number/,
    );
  });

  it('statechart: -o is the file, its extension the format unless --format says', () => {
    expect(parse(['statechart', 'demo', '-o', 'demo.svg'])).toMatchObject({ file: 'demo.svg', format: 'svg' });
    expect(parse(['statechart', 'demo', '-o', 'demo.dot'])).toMatchObject({ file: 'demo.dot', format: 'dot' });
    expect(parse(['statechart', 'demo', '--member', '1', '--last', '5'])).toMatchObject({
      file: undefined,
      format: 'svg',
      member: '1',
      last: 5,
    });
    expect(() => parse(['statechart', 'demo', '--format', 'png'])).toThrow(/svg, dot or json, not png/);
  });

  it('why: --kind in any case, --tail a positive count', () => {
    expect(parse(['why', 'demo-1', '--kind', 'etcdmember', '--tail', '3'])).toMatchObject({
      kind: 'EtcdMember',
      tail: 3,
    });
    expect(() => parse(['why', 'demo', '--tail', '0'])).toThrow(/--tail must be a whole number of at least 1/);
    expect(() => parse(['why', 'demo', '--kind', 'Pod'])).toThrow(/--kind must be one of EtcdCluster/);
  });

  it('durations as kubectl writes them', () => {
    expect(duration('90')).toBe(90_000);
    expect(duration('10m')).toBe(600_000);
    expect(duration('1h30m')).toBe(5_400_000);
    expect(() => duration('ten')).toThrow(/--timeout must be a duration/);
  });
});
