import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { podPhase, podStatus, waiting, type PodRuntime } from './podStatus.ts';

const pod = (restartPolicy: string): V1Pod => ({
  metadata: { name: 'p', namespace: 'n' },
  spec: { restartPolicy, containers: [{ name: 'a' }] },
});
const rt = (exitCode?: number, running = false): PodRuntime => {
  const c = waiting('a', 'img');
  if (running) c.state = { running: { startedAt: new Date() } };
  if (exitCode !== undefined) c.state = { terminated: { exitCode } };
  return { hostIP: '127.0.0.1', podIP: '127.10.0.1', init: [], containers: [c], initialized: true };
};

describe('pod status', () => {
  it('phase follows the containers and the restart policy', () => {
    expect(podPhase(pod('Always'), rt())).toBe('Pending');
    expect(podPhase(pod('Always'), rt(undefined, true))).toBe('Running');
    expect(podPhase(pod('Always'), rt(1))).toBe('Running');
    expect(podPhase(pod('Never'), rt(1))).toBe('Failed');
    expect(podPhase(pod('Never'), rt(0))).toBe('Succeeded');
    expect(podPhase(pod('OnFailure'), rt(0))).toBe('Succeeded');
    expect(podPhase(pod('OnFailure'), rt(2))).toBe('Running');
  });

  it('a Pod whose init container failed under restartPolicy Never has failed', () => {
    const r = rt();
    r.initialized = false;
    r.init.push({ ...waiting('init', 'img'), state: { terminated: { exitCode: 1 } } });
    expect(podPhase(pod('Never'), r)).toBe('Failed');
    expect(podPhase(pod('Always'), r)).toBe('Pending');
  });

  it('Ready names the unready containers and keeps its transition time while unchanged', () => {
    const first = podStatus(pod('Always'), rt(undefined, true));
    const ready = first.conditions!.find((c) => c.type === 'Ready')!;
    expect(ready).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [a]',
    });
    const again = podStatus({ ...pod('Always'), status: first }, rt(undefined, true));
    expect(again.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime).toBe(ready.lastTransitionTime);
    expect(again).toMatchObject({ podIP: '127.10.0.1', podIPs: [{ ip: '127.10.0.1' }], hostIP: '127.0.0.1' });
  });
});
