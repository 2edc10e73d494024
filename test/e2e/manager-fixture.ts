/**
 * The set-up and teardown every e2e file that runs the manager shares: a namespace of the
 * file's own and a manager scoped to it (`--namespace`) with a journal in a temp dir. Files run
 * in parallel on one cluster, each in namespaces of its own with a manager of its own; the
 * namespace's name is the file's prefix and the time, so two runs never share one.
 *
 *     const env = withManager('upgrade');            // at the top: env.ns and env.kube at once
 *     describe('...', () => {
 *       env.hooks({ args: ['--resync', '5'] });      // beforeAll: namespace, manager; afterAll: gone
 *       it('...', async () => { await env.manager.stop(); await env.start(); });
 *     });
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { clientsOf, createNamespace, deleteTestNamespace, until } from '../effects/kubernetes/e2e-context.ts';
import { startManager, type ManagerLine, type ManagerProcess } from '../../localcluster/manager-process.ts';

/** How the fixture's manager runs and its namespace is made. */
export interface ManagerHooks {
  /** Flags after `--namespace NS`. */
  readonly args?: readonly string[];
  /** Extra environment of the manager process. */
  readonly env?: Readonly<Record<string, string>>;
  /** Every log line of the manager, as it comes. */
  readonly onLine?: (line: ManagerLine) => void;
  /** Labels of the namespace (Pod Security admission, say). */
  readonly labels?: Readonly<Record<string, string>>;
  /** After the namespace is made and before the manager starts (Secrets its clusters name, say). */
  readonly beforeStart?: () => Promise<void>;
  /**
   * Delete the namespace first and wait (up to 2 min) until it is gone, then stop the manager:
   * its objects' finalizers are released by the manager as they go. Otherwise the manager stops first.
   */
  readonly namespaceFirst?: boolean;
}

/** A namespace of the file's own and the manager scoped to it. */
export class ManagerFixture {
  /** The namespace: the file's prefix and the time. */
  readonly ns: string;
  /** API clients of the test cluster. */
  readonly kube: ReturnType<typeof clientsOf>;
  readonly #prefix: string;
  #options: ManagerHooks = {};
  #dir: string | undefined;
  #manager: ManagerProcess | undefined;

  constructor(prefix: string) {
    this.#prefix = prefix;
    this.ns = `${prefix}-${Date.now().toString(36)}`;
    this.kube = clientsOf(inject('kubeconfig'));
  }

  /** The manager last started; throws before the first start. */
  get manager(): ManagerProcess {
    if (!this.#manager) throw new Error(`no manager started in ${this.ns} yet`);
    return this.#manager;
  }

  /** The manager's journal directory. */
  get dir(): string {
    if (!this.#dir) throw new Error(`no journal directory for ${this.ns} yet`);
    return this.#dir;
  }

  /** In the describe block it is called in: set-up before its tests, teardown after them. */
  hooks(options: ManagerHooks = {}): this {
    beforeAll(() => this.setUp(options));
    // A failed test (a timeout too) prints what each machine last did: a red run says why.
    afterEach(({ task }) => {
      if (task.result?.state === 'fail' && this.#manager) console.log(machineStory(this.#manager.lines, this.ns));
    });
    afterAll(() => this.tearDown());
    return this;
  }

  /** Makes the namespace and the journal directory, and starts the manager. */
  async setUp(options: ManagerHooks = {}): Promise<ManagerProcess> {
    this.#options = options;
    await createNamespace(this.kube.core, this.ns, options.labels ? { ...options.labels } : undefined);
    this.#dir = mkdtempSync(path.join(os.tmpdir(), `etcd-operator-${this.#prefix}-`));
    await options.beforeStart?.();
    return this.start();
  }

  /** Starts the manager on the fixture's journal: again after a stop, it resumes from it. */
  async start(): Promise<ManagerProcess> {
    const o = this.#options;
    this.#manager = await startManager({
      kubeconfig: inject('kubeconfig'),
      dir: this.dir,
      args: ['--namespace', this.ns, ...(o.args ?? [])],
      ...(o.env ? { env: o.env } : {}),
      ...(o.onLine ? { onLine: o.onLine } : {}),
    });
    return this.#manager;
  }

  /** The journal lost: the next start begins with an empty journal directory. */
  loseJournal(): void {
    rmSync(this.dir, { recursive: true, force: true });
    this.#dir = mkdtempSync(path.join(os.tmpdir(), `etcd-operator-${this.#prefix}-`));
  }

  /** Stops the manager and deletes the namespace (in the order the options say) and the journal. */
  async tearDown(): Promise<void> {
    if (this.#options.namespaceFirst) {
      await this.kube.core.deleteNamespace({ name: this.ns }).catch(() => undefined);
      const gone = () =>
        this.kube.core.readNamespace({ name: this.ns }).then(
          () => undefined,
          () => true,
        );
      await until('the namespace gone', gone, 120_000).catch(() => undefined);
    }
    await this.#manager?.stop();
    // What the manager did not release before it stopped: the namespace would stay Terminating.
    await deleteTestNamespace(this.kube, this.ns);
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
  }
}

/** A namespace named after `prefix` with a manager scoped to it; `hooks()` in a describe block sets them up. */
export const withManager = (prefix: string): ManagerFixture => new ManagerFixture(prefix);

/** A step line of the manager's log as one line: from -> to on event [intents]. */
export const stepLine = (l: ManagerLine): string =>
  `${String(l['from'])} -> ${String(l['to'])} on ${String(l['event'])} [${String(l['intents'])}]`;

/**
 * The manager's story of namespace `ns`, for a failed test: per object, its machine's last 12
 * steps (from -> to on event [intents]), then the manager's last 15 warnings and errors.
 */
export function machineStory(lines: readonly ManagerLine[], ns: string): string {
  const steps = new Map<string, string[]>();
  for (const l of lines) {
    if (l.msg !== 'step' || typeof l['object'] !== 'string' || !l['object'].startsWith(`${ns}/`)) continue;
    const key = `${String(l['machine'])} ${l['object']}`;
    const list = steps.get(key) ?? [];
    list.push(stepLine(l));
    steps.set(key, list);
  }
  const objects = [...steps].map(([key, list]) => `${key}:\n    ${list.slice(-12).join('\n    ')}`);
  const warnings = lines
    .filter((l) => l.level >= 40)
    .slice(-15)
    .map((l) => JSON.stringify(l));
  return `the manager of ${ns}, its machines' last steps:\n  ${objects.join('\n  ')}\nits last warnings:\n  ${warnings.join('\n  ')}`;
}
