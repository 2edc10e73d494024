/** What a crash-sweep action may use (scenarios.ts, recovery-actions.ts). */
import type { CoreV1Api } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import type { Converged } from '../e2e/etcd-cluster.ts';
import type { TestPki } from '../effects/etcd/test-pki.ts';
import type { RollbackSeen } from '../history/history.ts';

/** What an action may use. */
export interface ActionContext {
  readonly kubeconfig: string;
  readonly core: CoreV1Api;
  /** How long the operator gets to settle after each thing the user does. */
  readonly settleMs: number;
  /** What etcd said before the action (undefined for bootstrap). */
  readonly before?: Converged;
  /** What the scenario's cluster is created with beyond replicas and version (its spec.tls). */
  readonly spec: Partial<EtcdCluster['spec']>;
  /** The CA that signed the cluster's certificates (scenarios with tls). */
  readonly pki?: TestPki;
  /** Stops and starts the local cluster's nodes: only when the sweep started the cluster itself. */
  readonly nodes?: NodeControl;
  /** Told of a rollback in place the action made: the traffic recorded through it checks two epochs. */
  readonly rolledBack?: (r: RollbackSeen) => void;
}

/** A node of the sweep's local cluster stopped as a machine dies, and started again. */
export interface NodeControl {
  stop(name: string): Promise<void>;
  /** Starts the node again and waits until it is Ready. */
  start(name: string): Promise<void>;
}
