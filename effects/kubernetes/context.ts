/** What the Kubernetes handlers get besides their parameters: the API clients of one KubeConfig. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, PolicyV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import type { EffectContext } from '../types.ts';
import type { PodSettings } from './pod-settings.ts';

const version = (
  JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;

/** The operator's own image at this version: member Pods run its agent (check-data) from it. */
export const DEFAULT_AGENT_IMAGE = `ghcr.io/etcd-operator/etcd-operator:${version}`;

/** The API clients the handlers use. */
export interface KubeClients {
  readonly core: CoreV1Api;
  readonly batch: BatchV1Api;
  readonly custom: CustomObjectsApi;
  readonly policy: PolicyV1Api;
}

/** EffectContext plus the API clients and who reports Events. */
export interface KubeContext extends EffectContext {
  readonly kube: KubeClients;
  /** The Events' reportingInstance: this manager's identity (Pod name); defaults to 'etcd-operator'. */
  readonly instance?: string;
  /** Image member Pods run `etcd-operator agent` from; defaults to DEFAULT_AGENT_IMAGE. */
  readonly agentImage?: string;
  /** The manager's etcd image repository, pull Secrets and default resources of the Pods it makes. */
  readonly pods?: PodSettings;
}

/** The API clients of a KubeConfig. */
export function kubeClients(kc: KubeConfig): KubeClients {
  return {
    core: kc.makeApiClient(CoreV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    policy: kc.makeApiClient(PolicyV1Api),
  };
}
