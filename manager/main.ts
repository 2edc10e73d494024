/**
 * `etcd-operator manager`: the process. Its steps, in order:
 *
 *   1. parse the flags; 2. serve /healthz, /readyz and /metrics (and the debug page, when
 *   --debug-listen says where); 3. lead (a Lease), or wait;
 *   4. open the journal (one writer); 5. start the informers and the work queue, which resume
 *   every machine from the journal as its object is first seen; 6. on SIGTERM or SIGINT, stop
 *   taking work, let the steps in flight finish, close the journal and release the Lease.
 *
 * Losing the Lease ends the process (exit 1): a manager that may no longer be the leader must
 * not take one more step.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { pino, type Logger } from 'pino';
import { ConfigError, MANAGER_USAGE, parseManagerArgs, type ManagerConfig } from './config.ts';
import { Controller } from './controller.ts';
import { serveDebugPage, type DebugPage } from './debug/server.ts';
import { routeJournalApi } from './journal-api.ts';
import { JournalKeeper } from './journal-keeper.ts';
import { LeaderElector } from './leader.ts';
import { ManagerMetrics } from './metrics.ts';
import { KubeConfig } from '../effects/kubernetes/kube-config.ts';

/** How often the journal drops steps beyond what it keeps per object (journal/ DEFAULT_RETAIN_STEPS). */
const PRUNE_EVERY_MS = 10 * 60_000;

/** Runs the manager until a signal (resolves 0) or a fatal error (rejects or resolves 1). */
export async function runManager(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let config: ManagerConfig;
  try {
    config = parseManagerArgs(argv, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`etcd-operator manager: ${err.message}\n${MANAGER_USAGE}`);
    return 2;
  }
  const log = pino({ level: config.logLevel, base: { manager: config.identity } });
  const kubeConfig = new KubeConfig();
  if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromCluster();

  const metrics = new ManagerMetrics();
  let controller: Controller | undefined;
  let elector: LeaderElector | undefined;
  const keeper = new JournalKeeper({ path: config.journal, log, metrics });
  const notReady = (): string | undefined => {
    if (!(elector?.leading ?? true)) return 'not leading';
    if (!(controller?.synced ?? false)) return 'caches not synced yet';
    return keeper.unwritable;
  };
  const server = await serve(config, metrics, notReady, log);
  routeJournalApi(server, keeper); // GET /api/journal/...: `kubectl etcd why` through the service proxy
  let debugPage: DebugPage | undefined;
  try {
    debugPage =
      config.debugListen &&
      (await serveDebugPage({
        ...config.debugListen,
        source: keeper,
        running: () => controller?.runningUids(),
        log,
      }));
  } catch (err) {
    server.close();
    throw err;
  }

  let stop!: (code: number) => void;
  const stopped = new Promise<number>((resolve) => (stop = resolve));
  const onSignal = (signal: string): void => {
    log.info({ signal }, 'stopping');
    stop(0);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);

  try {
    if (config.leaderElect) {
      elector = new LeaderElector({
        kubeConfig,
        namespace: config.leaseNamespace,
        name: config.leaseName,
        identity: config.identity,
        log,
      });
      const leading = elector.campaign((why) => {
        log.error({ why }, 'lost the leader Lease: exiting so that no two managers act');
        stop(1);
      });
      if ((await Promise.race([leading.then(() => 'leading'), stopped.then(() => 'stopped')])) === 'stopped')
        return await stopped;
    }
    mkdirSync(dirname(config.journal), { recursive: true });
    log.info({ journal: config.journal, lsn: keeper.open().lastLsn() }, 'journal open');
    controller = new Controller({
      kubeConfig,
      journal: keeper,
      log,
      metrics,
      namespace: config.namespace,
      etcdAddress: config.etcdAddress,
      identity: config.identity,
      agentImage: config.agentImage,
      pods: config.pods,
      maxResyncMs: config.maxProbeIntervalMs,
      secretReadMs: config.secretReadIntervalMs,
    });
    // A signal while the caches fill (the API server may not answer) stops at once.
    const synced = controller
      .start()
      .then(() => log.info({ namespace: config.namespace ?? '(all)' }, 'caches synced; reconciling'));
    await Promise.race([synced, stopped]);
    const prune = setInterval(() => {
      const rows = keeper.prune();
      if (rows !== undefined) log.info({ rows }, 'journal pruned to the last steps of each object');
    }, PRUNE_EVERY_MS);
    prune.unref();
    const code = await stopped;
    clearInterval(prune);
    return code;
  } finally {
    await shutDown({ controller, elector, debugPage, keeper, server, log });
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/**
 * Lets go of everything the manager opened, each step logged: its work (the steps in flight
 * finish, the watches end, the etcd clients close), the debug page, the journal, the Lease (so the
 * next manager leads at once, with the journal already closed), and last the health port.
 */
async function shutDown(o: {
  controller: Controller | undefined;
  elector: LeaderElector | undefined;
  debugPage: DebugPage | undefined;
  keeper: JournalKeeper;
  server: Server;
  log: Logger;
}): Promise<void> {
  const { log } = o;
  if (o.controller) {
    log.info('stopping the work: no new steps; waiting for the steps in flight');
    await o.controller.stop().then(
      () => log.info('work stopped: steps in flight finished, watches ended, etcd clients closed'),
      (err: unknown) => log.warn({ err: String(err) }, 'stopping the controller failed'),
    );
  }
  await o.debugPage?.close();
  o.keeper.close();
  log.info('journal closed');
  if (await o.elector?.release()) log.info('leader Lease released');
  await new Promise<void>((resolve) => {
    o.server.close(() => resolve());
    o.server.closeAllConnections();
  });
  log.info('stopped');
}

/**
 * Serves the health endpoints and the metrics; resolves once listening. /readyz answers 503 with
 * `notReady()`'s one line while it says something; /healthz stays 200 while the process serves
 * (a restart would not free a full disk, and the manager recovers by itself once it can write).
 */
export function serve(
  config: Pick<ManagerConfig, 'listenHost' | 'listenPort'>,
  metrics: ManagerMetrics,
  notReady: () => string | undefined,
  log: Logger,
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    if (path === '/readyz') {
      const why = notReady()?.replace(/\s*\n\s*/g, ' ');
      return res
        .writeHead(why === undefined ? 200 : 503, { 'content-type': 'text/plain' })
        .end(why === undefined ? 'ok\n' : `${why}\n`);
    }
    if (path === '/metrics')
      return res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metrics.render());
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics, /healthz or /readyz\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.listenPort, config.listenHost, () => {
      const { address, port } = server.address() as AddressInfo;
      log.info({ address, port }, `serving /metrics, /healthz and /readyz on ${address}:${port}`);
      resolve(server);
    });
  });
}
