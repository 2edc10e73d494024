/**
 * The manager's HTTP endpoints through the API server's service proxy
 * (`/api/v1/namespaces/NS/services/SVC:http/proxy/...`): the journal for why and statechart,
 * and /metrics for database sizes. The user needs `get` on services/proxy for that one Service
 * (the chart's journal-reader Role); errors say so, and what else to check.
 */
import { ApiError, type KubeClient } from './api.ts';
import { PluginError } from './errors.ts';

/** Which Service fronts the manager. */
export interface ManagerService {
  readonly operatorNamespace: string;
  readonly operatorService: string;
}

/** The proxy path of `path` on the manager's `http` port. */
export const proxyPath = (s: ManagerService, path: string): string =>
  `/api/v1/namespaces/${encodeURIComponent(s.operatorNamespace)}/services/${encodeURIComponent(s.operatorService)}:http/proxy${path}`;

/** GET through the proxy, text; an ApiError becomes a PluginError that says what to do. */
export async function managerGet(k: KubeClient, s: ManagerService, path: string, timeoutMs = 30_000): Promise<string> {
  try {
    return await k.text(proxyPath(s, path), timeoutMs);
  } catch (err) {
    if (err instanceof ApiError) throw explain(err, s);
    throw err;
  }
}

/** What a proxy failure means for the user. */
export function explain(err: ApiError, s: ManagerService): PluginError {
  const svc = `Service ${s.operatorService} in namespace ${s.operatorNamespace}`;
  const where =
    'give --operator-namespace NS and --operator-service NAME (or KUBECTL_ETCD_OPERATOR_NAMESPACE and KUBECTL_ETCD_OPERATOR_SERVICE) where the chart is installed';
  if (err.status === 403) {
    return new PluginError(
      'ERR_PROXY_FORBIDDEN',
      `you may not read the manager's journal through the ${svc}: ${err.message}. It takes get on services/proxy for that Service: ` +
        `kubectl create rolebinding NAME -n ${s.operatorNamespace} --role=${s.operatorService}-journal-reader --user=YOU ` +
        '(the chart makes that Role; see docs/kubectl-etcd.md)',
    );
  }
  if (err.reason === 'NotFound' && /services? .*not found/i.test(err.message)) {
    return new PluginError('ERR_NO_MANAGER_SERVICE', `no ${svc}, which reaches the manager's journal: ${where}`);
  }
  if (err.status === 503 || err.reason === 'ServiceUnavailable' || /no endpoints/i.test(err.message)) {
    return new PluginError(
      'ERR_MANAGER_UNAVAILABLE',
      `the manager behind the ${svc} does not answer (${err.message}): is it running and ready? ` +
        `kubectl -n ${s.operatorNamespace} get pods,endpoints ${s.operatorService}`,
    );
  }
  return new PluginError('ERR_MANAGER', err.message);
}

/**
 * Database sizes by member from the manager's /metrics, for the clusters' members it reports:
 * etcd_operator_member_database_size_bytes (allocated) and _in_use_bytes (holding data), labelled
 * namespace, cluster and member (docs/metrics.md). A string says why there are none.
 */
export async function databaseSizes(
  k: KubeClient,
  s: ManagerService,
  namespace: string,
  cluster: string,
): Promise<Map<string, { dbSize: number; dbInUse: number | null }> | string> {
  let text: string;
  try {
    text = await managerGet(k, s, '/metrics', 5000);
  } catch (err) {
    return `not read: ${(err as Error).message.split(': ')[0]}`;
  }
  return sizesFromMetrics(text, namespace, cluster);
}

/** The sizes in a Prometheus text exposition, or why there are none. */
export function sizesFromMetrics(
  text: string,
  namespace: string,
  cluster: string,
): Map<string, { dbSize: number; dbInUse: number | null }> | string {
  const sizes = new Map<string, { dbSize: number; dbInUse: number | null }>();
  const inUse = new Map<string, number>();
  const line = /^etcd_operator_member_database_(size|in_use)_bytes\{([^}]*)\}\s+(\S+)/;
  for (const l of text.split('\n')) {
    const m = line.exec(l);
    if (!m) continue;
    const labels = new Map([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    const member = labels.get('member');
    if (labels.get('namespace') !== namespace || labels.get('cluster') !== cluster || !member) continue;
    const value = Number(m[3]);
    if (m[1] === 'in_use') inUse.set(member, value);
    else sizes.set(member, { dbSize: value, dbInUse: null });
  }
  if (sizes.size === 0) return 'the manager reports none for this cluster on /metrics';
  for (const [member, v] of sizes) sizes.set(member, { ...v, dbInUse: inUse.get(member) ?? null });
  return sizes;
}
