/**
 * Snapshot and restore through the operator against their floors, on the local cluster (needs
 * root): a 1-member EtcdCluster filled with BENCH_RESTORE_MIB (default 256) MiB, then
 *   snapshot: an EtcdSnapshot to S3 (versitygw in the cluster), created -> Succeeded, with the
 *             manager's RSS sampled every 100 ms throughout; floor: `etcdctl snapshot save` of
 *             the same member from the host, in the same run;
 *   restore:  a 3-member EtcdCluster from that snapshot, applied -> Steady; floor: the object
 *             downloaded, `etcdutl snapshot restore` three times, three etcd started as one cluster.
 * The snapshot's time is split by its Job's Pod, polled every 100 ms: created until its Pod is
 * seen, until its container runs, while the agent runs, and from its end until Succeeded.
 * Run: node test/bench/restore.ts (part of `make bench`) → prints a table, writes
 *      test/bench/results/restore.json; BENCH_RESTORE_SNAPSHOT_ONLY=1 stops after the snapshot.
 */
import { execFile } from 'node:child_process';
import {
  appendFileSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import { installCrds } from '../../localcluster/crds.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { startLocalCluster } from '../../localcluster/index.ts';
import { ClusterUnderTest } from '../e2e/etcd-cluster.ts';
import { startManager, type ManagerProcess } from '../../localcluster/manager-process.ts';
import { BUCKET, s3Destination, startS3 } from '../e2e/s3-server.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { clientsOf, createNamespace, until } from '../effects/kubernetes/e2e-context.ts';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const FILL_MIB = Number(process.env.BENCH_RESTORE_MIB ?? 256);
const SNAPSHOT_ONLY = process.env.BENCH_RESTORE_SNAPSHOT_ONLY === '1';
const VERSION_ETCD = '3.6.16';
const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const seconds = (ms: number): number => Math.round(ms / 10) / 100;

/** kB of VmRSS of a process, 0 once it is gone. */
function rssKB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS every 100 ms until stopped; returns the peak and the first sample. */
function sampler(pid: number): { stop(): { baseMiB: number; peakMiB: number } } {
  const base = rssKB(pid);
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, rssKB(pid))), 100);
  return {
    stop() {
      clearInterval(timer);
      return { baseMiB: Math.round(base / 102.4) / 10, peakMiB: Math.round(peak / 102.4) / 10 };
    },
  };
}

/** Moments of a snapshot Job's Pod, in ms since `t0` by this process's clock. */
interface PodMoments {
  seen?: number;
  running?: number;
  ended?: number;
}

/** Polls the Pods labelled `selector` every 100 ms until stopped, noting when the first is seen, runs and ends. */
function podMoments(kube: ReturnType<typeof clientsOf>, namespace: string, selector: string, t0: number) {
  const at: PodMoments = {};
  let stopped = false;
  const polling = (async () => {
    while (!stopped && at.ended === undefined) {
      const pods = await kube.core.listNamespacedPod({ namespace, labelSelector: selector }).catch(() => undefined);
      const now = performance.now() - t0;
      const state = pods?.items[0]?.status?.containerStatuses?.[0]?.state;
      if (pods?.items.length) at.seen ??= now;
      if (state?.running || state?.terminated) at.running ??= now;
      if (state?.terminated) at.ended ??= now;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop(): Promise<PodMoments> {
      stopped = true;
      await polling;
      return at;
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'etcd-operator-restore-bench-'));
log(`local cluster in ${dir}`);
const cluster = await startLocalCluster({
  dir,
  node: true,
  log: (l) => appendFileSync(join(dir, 'cluster.log'), `${l}\n`),
});
let manager: ManagerProcess | undefined;
const ns = 'bench';
try {
  await installCrds(cluster.kubectl);
  manager = await startManager({
    kubeconfig: cluster.kubeconfigPath,
    dir: join(dir, 'manager'),
    onLine: (l) => appendFileSync(join(dir, 'manager.log'), `${JSON.stringify(l)}\n`),
  });
  const kube = clientsOf(cluster.kubeconfigPath);
  await createNamespace(kube.core, ns);
  const s3 = await startS3(kube, ns);
  const src = new ClusterUnderTest(kube, ns, 'src');
  await src.create({ replicas: 1, storage: { size: `${FILL_MIB * 3}Mi` } });
  await src.settled(1);
  const etcd = await src.client();
  const value = Buffer.alloc(MiB - 1024, 'x');
  for (let i = 0; i < FILL_MIB; i++) await etcd.put(`blob-${i}`).value(value);
  const endpoint = `http://${(await kube.core.readNamespacedPod({ namespace: ns, name: 'src-0' })).status?.podIP}:2379`;
  etcd.close();
  log(`src filled with ${FILL_MIB} MiB`);

  // The floor first, so the operator's run cannot be said to have warmed the member's cache for it.
  const floorFile = join(dir, 'floor.db');
  let t0 = performance.now();
  await run(await binary('etcdctl', VERSION_ETCD), ['--endpoints', endpoint, 'snapshot', 'save', floorFile]);
  const snapshotFloorMs = performance.now() - t0;
  const bytes = statSync(floorFile).size;
  rmSync(floorFile);

  const api = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.snapshot };
  const rss = sampler(manager.child.pid!);
  t0 = performance.now();
  const moments = podMoments(kube, ns, 'etcd-operator.dev/snapshot=big', t0);
  await kube.custom.createNamespacedCustomObject({
    ...api,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'EtcdSnapshot',
      metadata: { name: 'big' },
      spec: { clusterRef: { name: 'src' }, destination: s3Destination(ns) },
    },
  });
  const done = await until('EtcdSnapshot big Succeeded', async () => {
    const s = (await kube.custom.getNamespacedCustomObject({ ...api, name: 'big' })) as EtcdSnapshot;
    if (s.status?.phase === 'Failed') throw new Error(JSON.stringify(s.status));
    return s.status?.phase === 'Succeeded' ? s : undefined;
  });
  const snapshotMs = performance.now() - t0;
  const managerRss = rss.stop();
  const pod = await moments.stop();
  const job = {
    createdToPodSeen: seconds(pod.seen ?? Number.NaN),
    podSeenToRunning: seconds((pod.running ?? Number.NaN) - (pod.seen ?? Number.NaN)),
    agentRunning: seconds((pod.ended ?? Number.NaN) - (pod.running ?? Number.NaN)),
    endedToSucceeded: seconds(snapshotMs - (pod.ended ?? Number.NaN)),
  };
  log(
    `snapshot: ${seconds(snapshotMs)} s (floor ${seconds(snapshotFloorMs)} s), manager RSS ${managerRss.baseMiB} -> peak ${managerRss.peakMiB} MiB`,
  );
  log(
    `  created -> Job's Pod seen ${job.createdToPodSeen} s, -> its container running +${job.podSeenToRunning} s, ` +
      `the agent running ${job.agentRunning} s, its end -> Succeeded ${job.endedToSucceeded} s (polled every 100 ms)`,
  );
  if (SNAPSHOT_ONLY) {
    const result = {
      at: new Date().toISOString(),
      fillMiB: FILL_MIB,
      snapshotBytes: bytes,
      snapshot: { operatorSeconds: seconds(snapshotMs), floorSeconds: seconds(snapshotFloorMs), managerRss, job },
    };
    console.log(JSON.stringify(result, null, 2));
    s3.client.destroy();
    process.exitCode = 0;
  } else {
    // The floor of a restore: the object fetched, three data dirs restored, three etcd started as one cluster.
    const local = new LocalEtcd('restore-floor', VERSION_ETCD);
    let restoreFloorMs: number;
    try {
      t0 = performance.now();
      const file = join(dir, 'fetched.db');
      const key = (done.status?.location ?? '').replace(`s3://${BUCKET}/`, '');
      const { Body } = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
      await pipeline(Body as NodeJS.ReadableStream, createWriteStream(file));
      const names = ['r0', 'r1', 'r2'];
      const peers = await Promise.all(names.map((n) => local.allocate(n)));
      const initial = names.map((n, i) => `${n}=${peers[i]}`).join(',');
      const etcdutl = await binary('etcdutl', VERSION_ETCD);
      await Promise.all(
        names.map((n, i) =>
          run(etcdutl, [
            ...['snapshot', 'restore', file, '--data-dir', join(local.dir, n), '--name', n],
            ...['--initial-cluster', initial, '--initial-advertise-peer-urls', peers[i]!],
            ...['--initial-cluster-token', local.ref.uid, '--bump-revision', '1000000000', '--mark-compacted'],
          ]),
        ),
      );
      await Promise.all(names.map((n) => local.start(n, initial, 'new')));
      restoreFloorMs = performance.now() - t0;
    } finally {
      await local.stop();
    }

    const dst = new ClusterUnderTest(kube, ns, 'dst');
    t0 = performance.now();
    await dst.create({
      replicas: 3,
      storage: { size: `${FILL_MIB * 3}Mi` },
      bootstrap: { restore: { snapshotName: 'big' } },
    });
    await dst.settled(3);
    const restoreMs = performance.now() - t0;
    log(`restore of 3: ${seconds(restoreMs)} s (floor ${seconds(restoreFloorMs)} s)`);
    s3.client.destroy();

    const result = {
      at: new Date().toISOString(),
      fillMiB: FILL_MIB,
      snapshotBytes: bytes,
      snapshot: { operatorSeconds: seconds(snapshotMs), floorSeconds: seconds(snapshotFloorMs), managerRss, job },
      restore3: { operatorSeconds: seconds(restoreMs), floorSeconds: seconds(restoreFloorMs) },
    };
    console.log(`
| ${(bytes / MiB).toFixed(0)} MiB snapshot | operator | floor | ratio |
| --- | ---: | ---: | ---: |
| snapshot to S3 (operator: created -> Succeeded, read back) | ${result.snapshot.operatorSeconds} s | ${result.snapshot.floorSeconds} s (etcdctl snapshot save) | ${(snapshotMs / snapshotFloorMs).toFixed(1)}x |
| restore of 3 members (operator: applied -> Steady) | ${result.restore3.operatorSeconds} s | ${result.restore3.floorSeconds} s (fetch, etcdutl x3, start) | ${(restoreMs / restoreFloorMs).toFixed(1)}x |

The manager's RSS during the snapshot: ${managerRss.baseMiB} MiB before, ${managerRss.peakMiB} MiB at its peak.`);
    const results = join(import.meta.dirname, 'results');
    mkdirSync(results, { recursive: true });
    writeFileSync(join(results, 'restore.json'), `${JSON.stringify(result, null, 2)}\n`);
  }
} finally {
  await manager?.stop();
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
