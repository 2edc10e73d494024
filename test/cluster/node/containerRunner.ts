/** Runs one container of a Pod again and again as its restart policy says, with probes and back-off. */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Container, V1LifecycleHandler } from '@kubernetes/client-node';
import { CrashBackoff, type BackoffOptions } from './backoff.ts';
import { logTail, startContainerProcess, terminatedState, type ContainerProcess } from './containerProcess.ts';
import { commandLine } from './env.ts';
import { ImagePullError } from './errors.ts';
import { imageMounts, resolveImage, type ImageContents } from './images.ts';
import type { ContainerRuntime } from './podStatus.ts';
import { probeOnce, ProbeWorker, type ProbeResult } from './probes.ts';
import type { Mount } from './sandbox.ts';
import { ROOT, type Identity } from './securityContext.ts';

/** What a runner needs from its Pod. */
export interface RunnerDeps {
  readonly podDir: string;
  readonly podIP: string;
  /** The Pod's network namespace (a path), entered by every run, exec, probe and hook. */
  readonly netns?: string;
  readonly hostname: string;
  /** Always, OnFailure or Never; init containers pass OnFailure or Never. */
  readonly restartPolicy: string;
  readonly backoff: BackoffOptions;
  /** Builds the environment, the volume mounts and the identity of one run. */
  readonly prepare: (c: V1Container) => Promise<{ env: Record<string, string>; mounts: Mount[]; identity: Identity }>;
  /** Tells the Pod that the container's status changed. */
  readonly changed: () => void;
  /** Posts an Event about the Pod. */
  readonly event: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
}

/** One container's restart loop. */
export class ContainerRunner {
  spec: V1Container;
  readonly rt: ContainerRuntime;
  readonly #deps: RunnerDeps;
  readonly #backoff: CrashBackoff;
  readonly #pullBackoff: CrashBackoff;
  readonly #abort = new AbortController();
  #proc: ContainerProcess | undefined;
  #changed = false;
  #sandboxed = false;
  /** Environment of the current (or last) run, for exec. */
  env: Record<string, string> = {};
  /** Who the current (or last) run is, for exec: probes, hooks and exec() run as it too. */
  identity: Identity = ROOT;
  #probes: ProbeWorker[] = [];

  constructor(spec: V1Container, rt: ContainerRuntime, deps: RunnerDeps) {
    this.spec = spec;
    this.rt = rt;
    this.#deps = deps;
    this.#backoff = new CrashBackoff(deps.backoff);
    this.#pullBackoff = new CrashBackoff(deps.backoff);
  }

  /** Pid of the current run once its mounts are in place (what exec can enter), if running. */
  get pid(): number | undefined {
    return this.#sandboxed ? this.#proc?.pid : undefined;
  }

  /** The current run's stdin when the container keeps it open (`stdin: true`) and runs. */
  get stdin(): Writable | undefined {
    return this.#sandboxed ? this.#proc?.stdin : undefined;
  }

  /** Runs until the restart policy says stop (or stop() is called); true when the last exit was 0. */
  async run(): Promise<boolean> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      const started = await this.#start();
      if (!started) continue;
      const exit = await started.exited;
      for (const p of this.#probes) p.stop();
      this.#proc = undefined;
      const term = terminatedState(exit, this.rt.containerID);
      // What the command wrote to its termination message file; with FallbackToLogsOnError, a
      // failed run that wrote nothing there gets its log tail instead (the kubelet's rules).
      const dir = join(this.#deps.podDir, 'containers', this.spec.name);
      const written = terminationMessage(join(dir, `${this.rt.restartCount}.termination-log`));
      const tail =
        !written && exit.exitCode !== 0 && this.spec.terminationMessagePolicy === 'FallbackToLogsOnError'
          ? logTail(join(dir, `${this.rt.restartCount}.log`))
          : '';
      if (written || tail) term.message = written || tail;
      Object.assign(this.rt, { state: { terminated: term }, ready: false, started: false });
      const [policy, changed] = [this.#deps.restartPolicy, this.#changed];
      this.#changed = false;
      const restart =
        !signal.aborted && (changed || policy === 'Always' || (policy === 'OnFailure' && exit.exitCode !== 0));
      if (!restart) {
        this.#deps.changed();
        return exit.exitCode === 0;
      }
      const wait = changed ? 0 : this.#backoff.delay(Date.now());
      this.rt.lastState = { terminated: term };
      if (wait > 0) {
        const message = `back-off ${Math.round(this.#backoff.currentMs / 1000)}s restarting failed container=${this.spec.name}`;
        this.rt.state = { waiting: { reason: 'CrashLoopBackOff', message } };
        this.#deps.changed();
        this.#deps.event('Warning', 'BackOff', `Back-off restarting failed container ${this.spec.name}`);
        await sleep(wait, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) break;
      }
      this.#backoff.restarted(Date.now());
      this.rt.restartCount++;
    }
    return false;
  }

  async #start(): Promise<ContainerProcess | undefined> {
    const signal = this.#abort.signal;
    let image: ImageContents;
    let prepared: Awaited<ReturnType<RunnerDeps['prepare']>>;
    try {
      image = await resolveImage(this.spec.image ?? '');
      prepared = await this.#deps.prepare(this.spec);
    } catch (err) {
      const pull = err instanceof ImagePullError;
      this.rt.state = {
        waiting: { reason: pull ? 'ErrImagePull' : 'CreateContainerConfigError', message: (err as Error).message },
      };
      this.#deps.changed();
      this.#deps.event('Warning', 'Failed', `${pull ? 'Failed to pull image' : 'Error'}: ${(err as Error).message}`);
      const wait = pull ? Math.max(this.#pullBackoff.delay(Date.now()), 1000) : 2000;
      await sleep(Math.min(wait, 2000), undefined, { signal }).catch(() => undefined);
      if (pull && !signal.aborted) {
        this.#pullBackoff.restarted(Date.now());
        this.rt.state = {
          waiting: {
            reason: 'ImagePullBackOff',
            message: `Back-off pulling image "${this.spec.image}": ${(err as Error).message}`,
          },
        };
        this.#deps.changed();
        this.#deps.event('Normal', 'BackOff', `Back-off pulling image "${this.spec.image}"`);
        await sleep(this.#pullBackoff.currentMs, undefined, { signal }).catch(() => undefined);
      }
      return undefined;
    }
    if (signal.aborted) return undefined;
    this.env = prepared.env;
    this.identity = prepared.identity;
    const run = this.rt.restartCount;
    const dir = join(this.#deps.podDir, 'containers', this.spec.name);
    // The file a container may write its termination message to, as the kubelet mounts one.
    const termination = join(dir, `${run}.termination-log`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(termination, '');
    chmodSync(termination, 0o666);
    const mounts = [
      ...prepared.mounts,
      ...imageMounts(image, join(dir, 'image')),
      { source: termination, target: this.spec.terminationMessagePath ?? '/dev/termination-log' },
    ];
    let proc: ContainerProcess;
    try {
      proc = startContainerProcess({
        mounts,
        scratch: join(this.#deps.podDir, 'scratch', this.spec.name),
        hostname: this.#deps.hostname,
        workingDir: this.spec.workingDir ?? '/',
        identity: prepared.identity,
        argv: commandLine(this.spec, image, prepared.env),
        env: prepared.env,
        logFile: join(dir, `${run}.log`),
        stdin: !!this.spec.stdin,
        ...(this.#deps.netns ? { netns: this.#deps.netns } : {}),
      });
    } catch (err) {
      // A mount source that is not there (a hostPath of type File, say): the kubelet's RunContainerError.
      this.rt.state = { waiting: { reason: 'RunContainerError', message: (err as Error).message } };
      this.#deps.changed();
      this.#deps.event('Warning', 'Failed', `Error: ${(err as Error).message}`);
      await sleep(2000, undefined, { signal }).catch(() => undefined);
      return undefined;
    }
    this.#proc = proc;
    this.#sandboxed = false;
    this.#deps.event('Normal', 'Pulled', `Container image "${this.spec.image}" already present on machine`);
    this.#deps.event('Normal', 'Started', `Started container ${this.spec.name}`);
    // Running is reported once the command runs in its mounts (before that, a SIGTERM would end the
    // sandbox script and exec could not enter) and its postStart is done, as the kubelet holds the
    // container's status and probes until then.
    this.#sandboxed = (await proc.sandboxed) && this.#proc === proc;
    const hook =
      this.spec.lifecycle?.postStart && this.#sandboxed && (await this.#hook(this.spec.lifecycle.postStart, 30_000));
    const started = !this.spec.startupProbe;
    Object.assign(this.rt, {
      state: { running: { startedAt: proc.startedAt } },
      containerID: `local://${proc.pid}`,
      started,
      ready: started && !this.spec.readinessProbe,
    });
    this.#deps.changed();
    if (hook && !hook.ok) {
      this.#deps.event('Warning', 'FailedPostStartHook', `PostStartHook failed: ${hook.message}`);
      proc.signal('SIGKILL');
      return proc;
    }
    this.#startProbes(prepared.env);
    return proc;
  }

  #startProbes(env: Record<string, string>): void {
    const target = { podIP: this.#deps.podIP, container: this.spec, pid: () => this.pid, env, identity: this.identity };
    const readiness = (): void => {
      if (!this.spec.readinessProbe) return;
      this.#add(
        new ProbeWorker(this.spec.readinessProbe, target, (ok, message) => {
          if (!ok) this.#deps.event('Warning', 'Unhealthy', `Readiness probe failed: ${message}`);
          this.rt.ready = ok;
          this.#deps.changed();
        }),
      );
    };
    const liveness = (): void => {
      if (!this.spec.livenessProbe) return;
      this.#add(
        new ProbeWorker(this.spec.livenessProbe, target, (ok, message) => ok || this.#unhealthy('Liveness', message)),
      );
    };
    if (!this.spec.startupProbe) {
      readiness();
      liveness();
      return;
    }
    this.#add(
      new ProbeWorker(this.spec.startupProbe, target, (ok, message) => {
        if (!ok) return this.#unhealthy('Startup', message);
        this.rt.started = true;
        this.rt.ready = !this.spec.readinessProbe;
        this.#deps.changed();
        readiness();
        liveness();
      }),
    );
  }

  #unhealthy(probe: string, message: string): void {
    this.#deps.event('Warning', 'Unhealthy', `${probe} probe failed: ${message}`);
    this.#deps.event(
      'Normal',
      'Killing',
      `Container ${this.spec.name} failed ${probe.toLowerCase()} probe, will be restarted`,
    );
    this.#proc?.signal('SIGKILL');
  }

  #add(p: ProbeWorker): void {
    this.#probes = [...this.#probes.filter((x) => x !== p), p];
    p.start();
  }

  /**
   * Takes a new spec of the container. A new image (the one field of a running Pod's container
   * that may change) restarts it at once whatever the policy, as the kubelet does.
   */
  respec(spec: V1Container, graceMs: number): void {
    if (spec.image === this.spec.image) return;
    this.spec = spec;
    this.rt.image = spec.image ?? '';
    this.#deps.event('Normal', 'Killing', `Container ${spec.name} definition changed, will be restarted`);
    const proc = this.#proc;
    if (!proc) return;
    this.#changed = true;
    proc.signal('SIGTERM');
    const timer = setTimeout(() => proc.signal('SIGKILL'), graceMs);
    void proc.exited.then(() => clearTimeout(timer));
  }

  /** Sends a signal to the current run (SIGKILL from a test: the restart policy applies). */
  signal(sig: NodeJS.Signals): void {
    this.#proc?.signal(sig);
  }

  /** Stops restarting; SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. */
  async stop(graceMs: number): Promise<void> {
    this.#abort.abort();
    for (const p of this.#probes) p.stop();
    const proc = this.#proc;
    if (!proc) return;
    const timer = setTimeout(() => proc.signal('SIGKILL'), graceMs);
    if (graceMs > 0) {
      this.#deps.event('Normal', 'Killing', `Stopping container ${this.spec.name}`);
      await this.#preStop(graceMs);
    }
    proc.signal(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    await proc.exited;
    clearTimeout(timer);
  }

  /** The preStop hook, within the grace period. */
  async #preStop(graceMs: number): Promise<void> {
    const r = this.spec.lifecycle?.preStop && (await this.#hook(this.spec.lifecycle.preStop, graceMs));
    if (r && !r.ok) this.#deps.event('Warning', 'FailedPreStopHook', `PreStopHook failed: ${r.message}`);
  }

  /** Runs a lifecycle hook (exec in the container, httpGet, tcpSocket or sleep) as the kubelet does. */
  async #hook(hook: V1LifecycleHandler, timeoutMs: number): Promise<ProbeResult> {
    if (hook.sleep)
      return sleep(Math.min(hook.sleep.seconds * 1000, timeoutMs)).then(() => ({ ok: true, message: 'slept' }));
    const target = {
      podIP: this.#deps.podIP,
      container: this.spec,
      pid: () => this.pid,
      env: this.env,
      identity: this.identity,
    };
    return probeOnce({ ...hook, timeoutSeconds: Math.max(1, Math.floor(timeoutMs / 1000)) }, target);
  }
}

/** The kubelet reads at most this much of a termination message file. */
const TERMINATION_MESSAGE_BYTES = 4096;

/** A run's termination message: the start of its file, '' when it wrote none. */
function terminationMessage(file: string): string {
  try {
    return readFileSync(file).subarray(0, TERMINATION_MESSAGE_BYTES).toString('utf8');
  } catch {
    return '';
  }
}
