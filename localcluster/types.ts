/**
 * Contracts between the parts of the local cluster: the control plane (etcd, kube-apiserver,
 * kube-controller-manager), the network (names and Services), the storage provisioner and
 * the real nodes that run Pods. localcluster/index.ts puts them together.
 */

/** Receives one line of a part's log. */
export type Log = (line: string) => void;

/** What a kubectl run printed and how it ended. */
export interface KubectlResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

/** Runs the pinned kubectl with the admin kubeconfig. A non-zero exit is returned, not thrown. */
export type Kubectl = (args: readonly string[], opts?: { readonly input?: string }) => Promise<KubectlResult>;

/** Options every part is started with. */
export interface PartOptions {
  /** Directory the part keeps its state in; a restart with the same directory resumes. */
  readonly dir: string;
  readonly log?: Log;
}

/** The running control plane. */
export interface ControlPlane {
  readonly dir: string;
  /** Admin kubeconfig (client certificate, cluster CA). */
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:PORT */
  readonly server: string;
  readonly kubectl: Kubectl;
  stop(): Promise<void>;
}

/** Names and Services for Pods (localcluster/network). */
export interface Network {
  /**
   * A hosts file kept current for `<hostname>.<subdomain>.<ns>.svc[.cluster.local]` of Pods and
   * `<service>.<ns>.svc[.cluster.local]` of Services. Rewritten in place, never replaced by a
   * rename, so that a bind mount of it at a Pod's /etc/hosts sees every change.
   */
  readonly hostsFile: string;
  /** Cuts every packet between this Pod address and any other Pod address. */
  isolate(podIP: string): Promise<void>;
  /** Undoes isolate. */
  heal(podIP: string): Promise<void>;
  stop(): Promise<void>;
}

/** Provisions PersistentVolumes for claims and deletes their data with them (localcluster/storage). */
export interface Storage {
  /** Deletes everything inside the volume bound to this claim (the claim and volume stay). */
  wipe(namespace: string, claim: string): Promise<void>;
  stop(): Promise<void>;
}

/** What a command run inside a container printed and how it ended. */
export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

/** A node of the cluster (localcluster/realnode), as tests and the crash sweep use it. */
export interface LocalNode {
  readonly name: string;
  /** SIGKILLs a container's process; the Pod's restartPolicy applies. Default: the first container. */
  killContainer(namespace: string, pod: string, container?: string): Promise<void>;
  /** A container's output so far (its current run). */
  logs(namespace: string, pod: string, container?: string): Promise<string>;
  /** Runs a command inside a running container. */
  exec(namespace: string, pod: string, argv: readonly string[], container?: string): Promise<ExecResult>;
  /**
   * Stops the node like a machine going down: its kubelet, container runtime and every container
   * are killed, the Node stops reporting and goes NotReady. Starting a node with the same dir and
   * name brings it back.
   */
  stop(): Promise<void>;
}

/** Options of localcluster/network and localcluster/storage. */
export interface ControllerOptions extends PartOptions {
  readonly kubeconfigPath: string;
}
