/** Runs one Pod bound to this node: volumes, init containers in order, containers, status, deletion. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreV1Api, V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { PodNetns } from '../network/podNetns.ts';
import type { Log } from '../types.ts';
import type { AddressPool } from './addresses.ts';
import type { BackoffOptions } from './backoff.ts';
import { ContainerRunner } from './containerRunner.ts';
import { containerEnv, type KeyLookup } from './env.ts';
import { VolumeError } from './errors.ts';
import type { RecordEvent } from './events.ts';
import { podStatus, waiting, type ContainerRuntime, type PodRuntime } from './podStatus.ts';
import type { Mount } from './sandbox.ts';
import { containerIdentity, type Identity } from './securityContext.ts';
import { StatusWriter } from './statusWriter.ts';
import { setUpVolumes, type PodVolumes } from './volumes.ts';

/** What every Pod worker shares with the node. */
export interface PodWorkerContext {
  readonly core: CoreV1Api;
  readonly nodeName: string;
  readonly hostIP: string;
  readonly apiHost: string;
  readonly apiPort: string;
  readonly caData: string;
  readonly hostsFile: string;
  readonly podsDir: string;
  readonly addresses: AddressPool;
  /** Makes each Pod's network namespace. */
  readonly netns: PodNetns;
  readonly backoff: BackoffOptions;
  readonly lookup: KeyLookup;
  readonly event: RecordEvent;
  readonly log: Log;
}

const tokenPath = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Carries restart counts over when a node takes its Pods back after a stop. */
function resumed(c: V1Container, prev: V1ContainerStatus | undefined): ContainerRuntime {
  const rt = waiting(c.name, c.image ?? '');
  if (prev) rt.restartCount = prev.restartCount + (prev.state?.running || prev.state?.terminated ? 1 : 0);
  if (prev?.state?.running)
    rt.lastState = { terminated: { exitCode: 137, reason: 'Error', message: 'the node was stopped' } };
  return rt;
}

/**
 * The Pod with a service-account token volume of the node's own when no container mounts one
 * (the ServiceAccount admission plugin normally adds kube-api-access-*), unless automount is off.
 */
function withToken(pod: V1Pod): V1Pod {
  const spec = pod.spec!;
  const mounted = [...(spec.initContainers ?? []), ...spec.containers].some((c) =>
    c.volumeMounts?.some((m) => m.mountPath === tokenPath),
  );
  if (spec.automountServiceAccountToken === false || mounted) return pod;
  const sources = [
    { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
    { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
  ];
  return {
    ...pod,
    spec: { ...spec, volumes: [...(spec.volumes ?? []), { name: 'kube-api-access-node', projected: { sources } }] },
  };
}

/** The lifecycle of one Pod on this node. */
export class PodWorker {
  pod: V1Pod;
  readonly dir: string;
  readonly #ctx: PodWorkerContext;
  readonly #rt: PodRuntime;
  readonly #status: StatusWriter;
  readonly #abort = new AbortController();
  #runners: ContainerRunner[] = [];
  #volumes: PodVolumes | undefined;
  /** The Pod's network namespace being made, then made (its path). */
  #sandbox: Promise<string | undefined> | undefined;
  #netns: string | undefined;
  #terminating: Promise<void> | undefined;

  constructor(pod: V1Pod, ctx: PodWorkerContext) {
    this.pod = pod;
    this.#ctx = ctx;
    const m = pod.metadata!;
    this.dir = join(ctx.podsDir, `${m.namespace}_${m.name}_${m.uid}`);
    const prev = pod.status;
    this.#rt = {
      hostIP: ctx.hostIP,
      startTime: prev?.startTime ?? new Date(),
      init: (pod.spec?.initContainers ?? []).map((c) =>
        resumed(
          c,
          prev?.initContainerStatuses?.find((s) => s.name === c.name),
        ),
      ),
      containers: (pod.spec?.containers ?? []).map((c) =>
        resumed(
          c,
          prev?.containerStatuses?.find((s) => s.name === c.name),
        ),
      ),
      initialized: false,
    };
    this.#status = new StatusWriter(ctx.core, pod, () => podStatus(this.pod, this.#rt), ctx.log);
  }

  /** Starts the Pod's lifecycle in the background. */
  start(): void {
    void this.#run().catch((err: unknown) =>
      this.#ctx.log(`pod ${this.#key()}: ${(err as Error).stack ?? String(err)}`),
    );
  }

  #key(): string {
    return `${this.pod.metadata?.namespace}/${this.pod.metadata?.name}`;
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    const phase = this.pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') return; // a finished Pod never runs again
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(
      join(this.dir, 'pod.json'),
      JSON.stringify({ containers: (this.pod.spec?.containers ?? []).map((c) => c.name) }),
    );
    // hostNetwork Pods share the node's address, as everywhere.
    this.#rt.podIP = this.pod.spec?.hostNetwork
      ? this.#ctx.hostIP
      : this.#ctx.addresses.allocate(this.pod.metadata!.uid!, this.pod.status?.podIP);
    this.#status.changed();
    this.#sandbox = this.#makeSandbox();
    this.#netns = await this.#sandbox;
    if (signal.aborted) return;
    while (!signal.aborted && !this.#volumes) {
      try {
        const volumes = await setUpVolumes(withToken(this.pod), this.dir, { ...this.#ctx, podIP: this.#rt.podIP });
        // Deleted meanwhile: #halt already ran and would not unmount what came after it.
        if (signal.aborted) return void (await volumes.close());
        this.#volumes = volumes;
      } catch (err) {
        // Anything else (the API server restarting, a mount failing) is retried the same way.
        const message = err instanceof VolumeError ? err.message : `setting up volumes: ${(err as Error).message}`;
        for (const c of [...this.#rt.init, ...this.#rt.containers])
          c.state = { waiting: { reason: 'ContainerCreating', message } };
        this.#status.changed();
        this.#ctx.event(this.pod, 'Warning', 'FailedMount', message);
        await sleep(1000, undefined, { signal }).catch(() => undefined);
      }
    }
    const policy = this.pod.spec?.restartPolicy ?? 'Always';
    const sidecars: ContainerRunner[] = [];
    for (const [i, spec] of (this.pod.spec?.initContainers ?? []).entries()) {
      if (signal.aborted) return;
      const rt = this.#rt.init[i]!;
      // A sidecar (restartPolicy Always) runs for the Pod's life; the next waits until it started.
      if (spec.restartPolicy === 'Always') {
        const sidecar = this.#runner(spec, rt, 'Always');
        sidecars.push(sidecar);
        this.#runners = [...sidecars];
        void sidecar.run();
        while (!rt.started && !signal.aborted) await sleep(100, undefined, { signal }).catch(() => undefined);
        continue;
      }
      const runner = this.#runner(spec, rt, policy === 'Never' ? 'Never' : 'OnFailure');
      this.#runners = [...sidecars, runner];
      if (!(await runner.run())) {
        this.#status.changed();
        return; // failed with restartPolicy Never, or stopped
      }
    }
    this.#rt.initialized = true;
    if (signal.aborted) return;
    const main = (this.pod.spec?.containers ?? []).map((spec, i) =>
      this.#runner(spec, this.#rt.containers[i]!, policy),
    );
    this.#runners = [...sidecars, ...main];
    this.#status.changed();
    await Promise.all(main.map((r) => r.run()));
    // The containers are done for good (Never/OnFailure): their sidecars are stopped too.
    await Promise.all(sidecars.map((r) => r.stop((this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000)));
  }

  #runner(spec: V1Container, rt: ContainerRuntime, restartPolicy: string): ContainerRunner {
    const hostname = this.pod.spec?.hostname ?? this.pod.metadata!.name!;
    return new ContainerRunner(spec, rt, {
      podDir: this.dir,
      podIP: this.#rt.podIP!,
      ...(this.#netns ? { netns: this.#netns } : {}),
      hostname,
      restartPolicy,
      backoff: this.#ctx.backoff,
      prepare: (c) => this.#prepare(c),
      changed: () => this.#status.changed(),
      event: (type, reason, message) => this.#ctx.event(this.pod, type, reason, message),
    });
  }

  async #prepare(c: V1Container): Promise<{ env: Record<string, string>; mounts: Mount[]; identity: Identity }> {
    const ctx = this.#ctx;
    const m = this.pod.metadata!;
    const identity = containerIdentity(this.pod.spec?.securityContext, c, `${m.name}_${m.namespace}(${m.uid})`);
    const env = await containerEnv(this.pod, c, { ...ctx, podIP: this.#rt.podIP! });
    const paths = this.#volumes!.paths;
    const mounts: Mount[] = (c.volumeMounts ?? []).map((vm) => {
      const base = paths.get(vm.name);
      if (!base) throw new VolumeError(vm.name, 'no such volume in the Pod');
      const source = vm.subPath ? join(base, vm.subPath) : base;
      if (vm.subPath) mkdirSync(source, { recursive: true });
      return { source, target: vm.mountPath, readOnly: !!vm.readOnly };
    });
    if (!mounts.some((m) => m.target === '/etc/hosts'))
      mounts.push({ source: ctx.hostsFile, target: '/etc/hosts', readOnly: true });
    const wantsToken =
      this.pod.spec?.automountServiceAccountToken !== false && !mounts.some((m) => m.target === tokenPath);
    if (wantsToken && paths.has('kube-api-access-node'))
      mounts.push({ source: paths.get('kube-api-access-node')!, target: tokenPath, readOnly: true });
    return { env, mounts, identity };
  }

  /** Takes a newer version of the Pod object; a deletionTimestamp starts graceful termination. */
  update(pod: V1Pod): void {
    this.pod = pod;
    this.#status.pod = pod;
    if (pod.metadata?.deletionTimestamp) return void this.terminate();
    const graceMs = (pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    for (const r of this.#runners) {
      const spec = pod.spec?.containers.find((c) => c.name === r.spec.name);
      if (spec) r.respec(spec, graceMs);
    }
  }

  /** The runner of a running container by name (default: the Pod's first container). */
  runner(container?: string): ContainerRunner | undefined {
    const name = container ?? this.pod.spec?.containers[0]?.name;
    return this.#runners.find((r) => r.spec.name === name);
  }

  /**
   * Graceful deletion: SIGTERM, terminationGracePeriodSeconds, SIGKILL, then the Pod object is
   * deleted with grace 0 (as the kubelet does once its containers are gone).
   */
  terminate(): Promise<void> {
    this.#terminating ??= (async () => {
      const m = this.pod.metadata!;
      const graceSeconds = m.deletionGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30;
      await this.#halt(graceSeconds * 1000);
      this.#status.close();
      // gracePeriodSeconds goes in the body: with a body, the API server ignores the query.
      await this.#ctx.core
        .deleteNamespacedPod({
          name: m.name!,
          namespace: m.namespace!,
          body: { gracePeriodSeconds: 0, preconditions: { uid: m.uid! } },
        })
        .catch((err: unknown) => {
          if ((err as { code?: number }).code !== 404 && (err as { code?: number }).code !== 409) throw err;
        });
    })();
    return this.#terminating;
  }

  /** The Pod object is gone (or the node stops): kill at once, write nothing more. */
  async kill(): Promise<void> {
    this.#status.close();
    await this.#halt(0);
  }

  async #halt(graceMs: number): Promise<void> {
    this.#abort.abort();
    await Promise.all(this.#runners.map((r) => r.stop(graceMs)));
    await this.#volumes?.close();
    if (await this.#sandbox) await this.#ctx.netns.detach(this.pod.metadata!.uid!);
    this.#ctx.addresses.release(this.pod.metadata!.uid!);
  }

  /** The Pod's network namespace, tried again every second until made (a kubelet retries a failed sandbox). */
  async #makeSandbox(): Promise<string | undefined> {
    const netns = this.#ctx.netns;
    if (this.pod.spec?.hostNetwork) return undefined;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        return await netns.attach(this.pod.metadata!.uid!, this.#rt.podIP!);
      } catch (err) {
        const message = `Failed to create pod sandbox: ${(err as Error).message}`;
        this.#ctx.event(this.pod, 'Warning', 'FailedCreatePodSandBox', message);
        await sleep(1000, undefined, { signal }).catch(() => undefined);
      }
    }
    return undefined;
  }
}
