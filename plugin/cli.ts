/**
 * `kubectl etcd`: day-2 of etcd-operator's clusters from the terminal, as a kubectl plugin.
 * kubectl runs the executable `kubectl-etcd` it finds on PATH (plugin/kubectl-etcd, which runs
 * `etcd-operator kubectl-etcd ARGS`); this is that command. docs/kubectl-etcd.md.
 */
import { ApiError, KubeClient } from './api.ts';
import { parse, UsageError, type ArgsEnv, type Command } from './args.ts';
import { runDefrag } from './defrag.ts';
import { PluginError } from './errors.ts';
import { runChart, runWhy } from './journal.ts';
import { runRestore } from './restore.ts';
import { runSnapshot } from './snapshot.ts';
import { runStatus } from './status.ts';
import { WaitTimeoutError, type PluginIO } from './wait.ts';

/** The usage text. */
export const KUBECTL_ETCD_USAGE = `usage: kubectl etcd COMMAND NAME [flags]

Day-2 for etcd-operator's EtcdClusters: what the operator says about them, and asking it to act.

commands:
  status NAME                 members, leader, health, versions, database sizes, last backup,
                              the step in flight and what it waits for          [-o json|yaml]
  snapshot NAME               take an EtcdSnapshot now and wait for it          [-o json|yaml]
      --pvc CLAIM[/DIR] | --s3 s3://BUCKET/PREFIX --s3-credentials SECRET [--s3-endpoint URL]
      [--s3-region R] [--s3-path-style] | --like SNAPSHOT   where it goes (default: the
                              cluster's EtcdSnapshotSchedule's, or spec.upgrade.snapshot's)
      --name SNAPSHOT  --deletion-policy Delete|Retain
  restore SNAPSHOT --to NAME  a new EtcdCluster restored from the snapshot, printed as YAML
      [--like CLUSTER] [--replicas N] [--version X.Y.Z] [--apply: create it and wait until Available]
  defrag NAME                 ask the operator to defragment every member now, and wait
  why NAME                    the journal's timeline: each step's event, transition, intents and
                              outcomes (NAME: a cluster, or one of its members or snapshots)
      [--kind KIND] [--tail STEPS]                                               [-o json|yaml]
  statechart NAME             the cluster's state chart with the path it took
      [--member M] [--last N] [--format svg|dot|json] [-o FILE]

flags:
  -n, --namespace NS          the object's namespace (default: the context's, else default)
      --kubeconfig PATH       (default: $KUBECONFIG, else ~/.kube/config)   --context NAME
      --timeout DURATION      longest wait of snapshot, restore --apply, defrag (default 10m)
      --no-wait               return once asked
      --operator-namespace NS, --operator-service NAME   the manager's Service, which why,
                              statechart and status's database sizes go through (the API server's
                              service proxy; default etcd-operator-system/etcd-operator, or
                              $KUBECTL_ETCD_OPERATOR_NAMESPACE, $KUBECTL_ETCD_OPERATOR_SERVICE)
`;

/** Runs one command line; resolves to the exit code (0, 1 failed, 2 usage). */
export async function runKubectlEtcd(
  argv: readonly string[],
  io: PluginIO,
  env: ArgsEnv & { readonly KUBECONFIG?: string | undefined } = process.env,
  signal?: AbortSignal,
): Promise<number> {
  let c: Command;
  try {
    c = parse(argv, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`kubectl etcd: ${err.message}\nrun 'kubectl etcd --help' for usage\n`);
    return 2;
  }
  if (c.command === 'help') {
    io.stdout(KUBECTL_ETCD_USAGE);
    return argv.length === 0 ? 2 : 0;
  }
  try {
    const k = new KubeClient({
      ...(c.kubeconfig ? { kubeconfig: c.kubeconfig } : {}),
      ...(c.context ? { context: c.context } : {}),
    });
    switch (c.command) {
      case 'status':
        return await runStatus(k, c, io);
      case 'snapshot':
        return await runSnapshot(k, c, io, signal);
      case 'restore':
        return await runRestore(k, c, io, signal);
      case 'defrag':
        return await runDefrag(k, c, io, signal);
      case 'why':
        return await runWhy(k, c, io);
      case 'statechart':
        return await runChart(k, c, io);
    }
  } catch (err) {
    io.stderr(`kubectl etcd ${c.command}: ${explain(err, c)}\n`);
    return 1;
  }
}

/** An error as one line that says what to do. */
export function explain(err: unknown, c: Exclude<Command, { command: 'help' }>): string {
  const ns = c.namespace ?? 'the current namespace';
  if (err instanceof PluginError) return err.message;
  if (err instanceof WaitTimeoutError) {
    return `${err.message}\n  it keeps going without this command: kubectl etcd status ${'name' in c ? c.name : ''} -n ${ns}, or run again with a longer --timeout`;
  }
  if (err instanceof ApiError) {
    if (err.status === 404 && /etcdclusters/.test(err.message)) {
      return `${err.message} (kubectl get etcdclusters -n ${ns} lists them; -n NS picks another namespace)`;
    }
    if (err.status === 404 && /could not find the requested resource/.test(err.message)) {
      return `${err.message}: are etcd-operator's CRDs installed? (kubectl get crd etcdclusters.etcd-operator.dev)`;
    }
    if (err.status === 403)
      return `${err.message} (ask your cluster admin for the rights; docs/kubectl-etcd.md lists them)`;
    return err.message;
  }
  if (err instanceof Error && err.name === 'AbortError') return 'interrupted';
  return err instanceof Error ? err.message : String(err);
}
