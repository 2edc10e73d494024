import { describe, expect, it } from 'vitest';
import { controllersOf } from './controller-manager.ts';

describe('controller manager flags', () => {
  it('names the cloud controllers off before 1.37, and not from 1.37 (which refuses their names)', () => {
    expect(controllersOf('v1.34.4')).toBe(
      '*,-cloud-node-lifecycle-controller,-node-route-controller,-service-lb-controller,-node-ipam-controller',
    );
    expect(controllersOf('v1.37.2')).toBe('*,-node-ipam-controller');
    expect(controllersOf(undefined)).toBe(controllersOf('v1.37.2'));
  });
});
