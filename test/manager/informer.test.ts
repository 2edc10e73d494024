import { describe, expect, it } from 'vitest';
import { Informer, type Listed, type WatchFn } from '../../manager/informer.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

interface Obj {
  metadata: { name: string; namespace: string; resourceVersion: string; managedFields?: unknown };
}
const obj = (name: string, rv: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
/** Waits until `done()` holds (the scripted watches run on timers), or 5 s have passed. */
async function settle(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 5000; waited += 5) await new Promise((r) => setTimeout(r, 5));
}

/**
 * A scripted API server: lists come from `lists` in turn; each watch plays the next script of
 * events and ends. (The real API server's 410 Gone is hard to provoke on demand; the informer's
 * list and watch against a real one are in test/e2e/manager-runtime.test.ts.)
 */
function scripted(lists: Listed<Obj>[], watches: [string, unknown][][]) {
  const seen: string[] = [];
  const watch: WatchFn = (_path, query, callback, done) => {
    seen.push(String(query.resourceVersion));
    const script = watches.shift();
    setTimeout(() => {
      for (const [phase, o] of script ?? []) callback(phase, o);
      if (script) done(null);
    }, 1);
    return Promise.resolve({ abort: () => undefined });
  };
  const list = (): Promise<Listed<Obj>> => Promise.resolve(lists.shift() ?? { items: [], resourceVersion: '999' });
  return { watch, list, seen };
}

describe('informer', () => {
  it('resumes a watch that ends from the last resourceVersion it saw', async () => {
    const api = scripted(
      [{ items: [obj('a', '5')], resourceVersion: '10' }],
      [[['MODIFIED', obj('a', '11')]], [['BOOKMARK', obj('', '15')]], [['ADDED', obj('b', '16')]]],
    );
    const changes: string[] = [];
    const informer = new Informer<Obj>({
      name: 't',
      kubeConfig: new KubeConfig(),
      path: '/x',
      log: quiet,
      list: api.list,
      watch: api.watch,
      onChange: (c, o) => changes.push(`${c} ${o.metadata.name}`),
    });
    await informer.start();
    await settle(() => api.seen.length >= 4);
    informer.stop();
    expect(api.seen.slice(0, 4)).toEqual(['10', '11', '15', '16']);
    expect(changes).toEqual(['added a', 'modified a', 'added b']);
    expect(informer.lists).toBe(1);
  });

  it('at log level debug, says each watch event it applies (logLevel debug changes what is logged)', async () => {
    const api = scripted([{ items: [], resourceVersion: '10' }], [[['ADDED', obj('b', '16')]]]);
    const lines: { obj: object; msg?: string }[] = [];
    const informer = new Informer<Obj>({
      name: 't',
      kubeConfig: new KubeConfig(),
      path: '/x',
      log: { ...quiet, debug: (o: object, msg?: string) => void lines.push({ obj: o, msg }) },
      list: api.list,
      watch: api.watch,
      onChange: () => undefined,
    });
    await informer.start();
    await settle(() => lines.length >= 1);
    informer.stop();
    expect(lines[0]).toEqual({
      obj: { informer: 't', event: 'ADDED', object: expect.stringContaining('b') as string, resourceVersion: '16' },
      msg: 'watch event',
    });
  });

  it('lists again on 410 Gone and reports every object deleted while it was not watching', async () => {
    const api = scripted(
      [
        { items: [obj('a', '5'), obj('b', '6')], resourceVersion: '10' },
        { items: [obj('a', '20')], resourceVersion: '30' },
      ],
      [[['ERROR', { kind: 'Status', code: 410, reason: 'Expired' }]]],
    );
    const changes: string[] = [];
    const informer = new Informer<Obj>({
      name: 't',
      kubeConfig: new KubeConfig(),
      path: '/x',
      log: quiet,
      list: api.list,
      watch: api.watch,
      onChange: (c, o) => changes.push(`${c} ${o.metadata.name}`),
    });
    await informer.start();
    await settle(() => api.seen.length >= 2);
    informer.stop();
    expect(informer.lists).toBe(2);
    expect(changes).toEqual(['added a', 'added b', 'deleted b', 'modified a']);
    expect(informer.get('ns', 'b')).toBeUndefined();
    expect(informer.get('ns', 'a')?.metadata.resourceVersion).toBe('20');
    expect(api.seen[1]).toBe('30');
  });

  it('caches objects without their managedFields, from the list and from the watch', async () => {
    const managed = (name: string, rv: string): Obj => ({
      metadata: { ...obj(name, rv).metadata, managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:spec': {} } }] },
    });
    const api = scripted([{ items: [managed('a', '5')], resourceVersion: '10' }], [[['ADDED', managed('b', '11')]]]);
    const informer = new Informer<Obj>({
      name: 't',
      kubeConfig: new KubeConfig(),
      path: '/x',
      log: quiet,
      list: api.list,
      watch: api.watch,
      onChange: () => undefined,
    });
    await informer.start();
    await settle(() => informer.get('ns', 'b') !== undefined);
    informer.stop();
    expect(informer.get('ns', 'a')?.metadata).toEqual(obj('a', '5').metadata);
    expect(informer.get('ns', 'b')?.metadata).toEqual(obj('b', '11').metadata);
  });
});
