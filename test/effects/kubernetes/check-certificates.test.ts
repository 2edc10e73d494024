import { describe, expect, it } from 'vitest';
import type { Certificate } from '../../../effects/kubernetes/build-certificates.ts';
import { notReady } from '../../../effects/kubernetes/check-certificates.ts';

const withReady = (
  condition?: { status: string; reason?: string; message?: string; observedGeneration?: number },
  generation = 1,
): Certificate =>
  ({
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'demo-peer-tls', generation },
    spec: {},
    status: condition
      ? {
          conditions: [
            { type: 'Issuing', status: 'True' },
            { type: 'Ready', ...condition },
          ],
        }
      : {},
  }) as unknown as Certificate;

describe('checkCertificates: what a Certificate not Ready is said as', () => {
  it('Ready True is ready', () => {
    expect(notReady('demo-peer-tls', withReady({ status: 'True', reason: 'Ready', observedGeneration: 1 }))).toBeNull();
  });

  it('Ready True of an older generation (a spec just patched back) is not ready yet', () => {
    expect(notReady('demo-peer-tls', withReady({ status: 'True', reason: 'Ready', observedGeneration: 1 }, 2))).toBe(
      'Certificate demo-peer-tls is being issued again for its changed spec',
    );
    // A condition without observedGeneration is taken as it says.
    expect(notReady('demo-peer-tls', withReady({ status: 'True', reason: 'Ready' }, 2))).toBeNull();
  });

  it('Ready False names the Certificate with cert-manager’s reason and message', () => {
    expect(
      notReady(
        'demo-peer-tls',
        withReady({ status: 'False', reason: 'Failed', message: 'issuer ca not found or not Ready' }),
      ),
    ).toBe('Certificate demo-peer-tls is not Ready (Failed: issuer ca not found or not Ready)');
  });

  it('no Ready condition asks whether cert-manager runs; no Certificate says so', () => {
    expect(notReady('demo-peer-tls', withReady())).toBe(
      'Certificate demo-peer-tls has no Ready condition yet (is cert-manager running?)',
    );
    expect(notReady('demo-peer-tls', null)).toBe('Certificate demo-peer-tls does not exist');
  });
});
