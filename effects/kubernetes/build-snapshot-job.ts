/**
 * The Jobs of an EtcdSnapshot, both running `etcd-operator agent` from the operator's image:
 * one streams the snapshot from a member to its destination and reads it back; the other
 * deletes what it stored. Where the snapshot goes is derived from the EtcdSnapshot alone, so
 * both Jobs (and a manager after a crash) name the same object.
 */
import type { V1EnvVar, V1Job, V1ObjectMeta, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { apiVersion } from '../../api/v1alpha1/index.ts';
import { containerSecurityContext, podSecurityContext } from './build-security.ts';
import { memberClientURL } from './build-services.ts';
import { agentEtcdTLS, tlsOf } from './build-tls.ts';
import { controllerRef, LABEL } from './meta.ts';
import { pullSecrets, resourcesOr } from './pod-settings.ts';
import type { PodSettings } from './pod-settings.ts';

/** Where a PVC destination is mounted in the Jobs' Pods. */
export const SNAPSHOT_MOUNT = '/snapshots';
/** The agent's container in both Jobs. */
export const AGENT_CONTAINER = 'agent';
/** Attempts of a Job before it fails for good (each a new Pod). */
export const JOB_BACKOFF_LIMIT = 2;
/** Longest a snapshot Job may run, all attempts together. */
export const SNAPSHOT_DEADLINE_SECONDS = 3600;
/**
 * An unfinished upload beside a snapshot's key begun longer ago than this belongs to no Job
 * that can still complete it (each is stopped at its deadline): the agents abort it. Twice the
 * deadline, so a store's clock ahead of the Pod's by up to an hour aborts nothing still running.
 */
export const STALE_UPLOAD_SECONDS = 2 * SNAPSHOT_DEADLINE_SECONDS;

/** Name of the Job that takes the snapshot. */
export const snapshotJobName = (snapshot: string): string => `${snapshot}-snapshot`;
/** Name of the Job that deletes the stored snapshot. */
export const snapshotDeleteJobName = (snapshot: string): string => `${snapshot}-delete`;

/** The file or object name of a snapshot: unique per EtcdSnapshot, even for one created again under the same name. */
function baseName(s: EtcdSnapshot): string {
  return `${s.metadata.name ?? ''}-${(s.metadata.uid ?? '').slice(0, 8)}.db`;
}

/** Where the snapshot is stored, as the agent's arguments take it and as users read it. */
export interface StoredAt {
  /** The agent's destination arguments. */
  readonly args: readonly string[];
  /** s3://bucket/key, or pvc://claim/path. */
  readonly location: string;
  /** The object's key, or the file's path inside the claim's volume. */
  readonly path: string;
}

/** The agent's arguments that name an S3 object. */
export function s3Args(
  s3: {
    readonly bucket: string;
    readonly endpoint?: string;
    readonly region?: string;
    readonly forcePathStyle?: boolean;
  },
  key: string,
): string[] {
  return [
    `--s3-bucket=${s3.bucket}`,
    `--s3-key=${key}`,
    ...(s3.endpoint ? [`--s3-endpoint=${s3.endpoint}`] : []),
    ...(s3.region ? [`--s3-region=${s3.region}`] : []),
    ...(s3.forcePathStyle ? ['--s3-force-path-style'] : []),
  ];
}

/** The S3 keys of a Secret as the agent's environment: the Pod reads the Secret, the manager never does. */
export function s3CredentialEnv(ref: {
  readonly name: string;
  readonly accessKeyIDKey?: string;
  readonly secretAccessKeyKey?: string;
}): V1EnvVar[] {
  const fromSecret = (name: string, key: string): V1EnvVar => ({
    name,
    valueFrom: { secretKeyRef: { name: ref.name, key } },
  });
  return [
    fromSecret('AWS_ACCESS_KEY_ID', ref.accessKeyIDKey ?? 'AWS_ACCESS_KEY_ID'),
    fromSecret('AWS_SECRET_ACCESS_KEY', ref.secretAccessKeyKey ?? 'AWS_SECRET_ACCESS_KEY'),
  ];
}

/** The destination of an EtcdSnapshot: the S3 key or the file on the claim. */
export function storedAt(s: EtcdSnapshot): StoredAt {
  const ns = s.metadata.namespace ?? '';
  const cluster = s.spec.clusterRef.name;
  const { s3, pvc } = s.spec.destination;
  if (s3) {
    const key = `${s3.keyPrefix ?? ''}${ns}/${cluster}/${baseName(s)}`;
    return { location: `s3://${s3.bucket}/${key}`, path: key, args: s3Args(s3, key) };
  }
  if (!pvc) throw new TypeError(`EtcdSnapshot ${ns}/${s.metadata.name ?? ''} has no destination`);
  const dir = (pvc.subPath ?? '').replace(/\/+$/, '');
  const relative = `${dir ? `${dir}/` : ''}${ns}-${cluster}-${baseName(s)}`;
  return {
    location: `pvc://${pvc.claimName}/${relative}`,
    path: relative,
    args: [`--file=${SNAPSHOT_MOUNT}/${relative}`],
  };
}

/** Where a caBundle is mounted in the agent's container. */
export const CA_BUNDLE_MOUNT = '/etc/etcd-operator/s3-ca';

/** What an agent's Pod needs for an S3 store: its keys, and the CA of a private endpoint. */
export interface PodAccess {
  readonly env: V1EnvVar[];
  readonly volumes: V1Volume[];
  readonly mounts: V1VolumeMount[];
}

/**
 * The S3 keys from their Secret, and a caBundle as a file Node trusts besides the public CAs
 * (NODE_EXTRA_CA_CERTS, read at the agent's start).
 */
export function s3Access(s3: {
  readonly credentialsSecretRef: Parameters<typeof s3CredentialEnv>[0];
  readonly caBundle?: { readonly configMapName: string; readonly key?: string };
}): PodAccess {
  const env = s3CredentialEnv(s3.credentialsSecretRef);
  const ca = s3.caBundle;
  if (!ca) return { env, volumes: [], mounts: [] };
  const key = ca.key ?? 'ca.crt';
  return {
    env: [...env, { name: 'NODE_EXTRA_CA_CERTS', value: `${CA_BUNDLE_MOUNT}/${key}` }],
    volumes: [{ name: 's3-ca', configMap: { name: ca.configMapName, items: [{ key, path: key }] } }],
    mounts: [{ name: 's3-ca', mountPath: CA_BUNDLE_MOUNT, readOnly: true }],
  };
}

/** The destination's credentials and volume, as the Pod takes them. */
function access(s: EtcdSnapshot): PodAccess {
  const { s3, pvc } = s.spec.destination;
  if (s3) return s3Access(s3);
  return {
    env: [],
    volumes: [{ name: 'snapshots', persistentVolumeClaim: { claimName: pvc?.claimName ?? '' } }],
    mounts: [{ name: 'snapshots', mountPath: SNAPSHOT_MOUNT }],
  };
}

/** What an agent Job is made of besides its image. */
export interface AgentJob {
  readonly name: string;
  readonly namespace: string;
  /** Its labels, on the Job and its Pods: never the cluster's (the Services select members by it). */
  readonly labels: Record<string, string>;
  /** The object that owns it (garbage-collected with it). */
  readonly owner: { readonly kind: string; readonly metadata: V1ObjectMeta };
  readonly args: readonly string[];
  readonly env?: readonly V1EnvVar[];
  readonly volumes?: readonly V1Volume[];
  readonly mounts?: readonly V1VolumeMount[];
}

/**
 * A Job that runs `etcd-operator agent` once: never restarted in place, retried as a new Pod up
 * to JOB_BACKOFF_LIMIT times, for an hour at most. The agent writes its report (or why it failed)
 * as the termination message, where the operator reads it.
 */
export function agentJob(j: AgentJob, image: string, settings: PodSettings = {}): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: j.name,
      namespace: j.namespace,
      labels: j.labels,
      ownerReferences: [controllerRef({ apiVersion, kind: j.owner.kind, metadata: j.owner.metadata })],
    },
    spec: {
      backoffLimit: JOB_BACKOFF_LIMIT,
      activeDeadlineSeconds: SNAPSHOT_DEADLINE_SECONDS,
      template: {
        metadata: { labels: j.labels },
        spec: {
          restartPolicy: 'Never',
          enableServiceLinks: false,
          // The agent talks to etcd and the store, never to the API server: no token to lose.
          automountServiceAccountToken: false,
          securityContext: podSecurityContext(),
          ...pullSecrets(settings),
          containers: [
            {
              name: AGENT_CONTAINER,
              image,
              args: [...j.args],
              env: [...(j.env ?? [])],
              volumeMounts: [...(j.mounts ?? [])],
              securityContext: containerSecurityContext(),
              ...resourcesOr(undefined, settings.jobResources),
              // The agent writes its report there; its log is the fallback when it could not.
              terminationMessagePolicy: 'FallbackToLogsOnError',
            },
          ],
          volumes: [...(j.volumes ?? [])],
        },
      },
    },
  };
}

/** A Job of an EtcdSnapshot running the agent, labelled with its role and owned by the snapshot. */
export function snapshotAgentJob(
  s: EtcdSnapshot,
  name: string,
  role: 'snapshot' | 'delete' | 'verify',
  args: string[],
  image: string,
  extra: { volumes: V1Volume[]; mounts: V1VolumeMount[] } = { volumes: [], mounts: [] },
  settings: PodSettings = {},
): V1Job {
  const labels = {
    [LABEL.name]: 'etcd-snapshot',
    [LABEL.managedBy]: 'etcd-operator',
    [LABEL.snapshot]: s.metadata.name ?? '',
    [LABEL.job]: role,
  };
  const owner = { kind: 'EtcdSnapshot', metadata: s.metadata };
  const a = access(s);
  const volumes = [...a.volumes, ...extra.volumes];
  const mounts = [...a.mounts, ...extra.mounts];
  return agentJob(
    { name, namespace: s.metadata.namespace ?? '', labels, owner, args, env: a.env, volumes, mounts },
    image,
    settings,
  );
}

/** S3: the agents also abort the stale uploads beside the key (what a run killed on its last attempt left). */
const sweepArgs = (s: EtcdSnapshot): string[] =>
  s.spec.destination.s3 ? [`--sweep-older-than=${STALE_UPLOAD_SECONDS}`] : [];

/**
 * The Job that streams the snapshot from `member` and checks what it stored. With client TLS it
 * calls the member by its name over https with the operator's client certificate, mounted from
 * its Secret (the manager never hands the Job the contents).
 */
export function buildSnapshotJob(
  s: EtcdSnapshot,
  member: string,
  image: string,
  cluster?: EtcdCluster,
  settings: PodSettings = {},
): V1Job {
  const ns = s.metadata.namespace ?? '';
  const tls = agentEtcdTLS(cluster);
  const endpoint = memberClientURL({ namespace: ns, name: s.spec.clusterRef.name }, member, tlsOf(cluster).client);
  const args = [
    'agent',
    'snapshot',
    `--endpoint=${endpoint}`,
    ...tls.args,
    ...storedAt(s).args,
    `--timeout=${SNAPSHOT_DEADLINE_SECONDS}`,
    ...sweepArgs(s),
  ];
  return snapshotAgentJob(s, snapshotJobName(s.metadata.name ?? ''), 'snapshot', args, image, tls, settings);
}

/** The Job that deletes the stored snapshot (and any upload or partial file left behind). */
export function buildSnapshotDeleteJob(s: EtcdSnapshot, image: string, settings: PodSettings = {}): V1Job {
  const args = ['agent', 'delete-snapshot', ...storedAt(s).args, ...sweepArgs(s)];
  return snapshotAgentJob(s, snapshotDeleteJobName(s.metadata.name ?? ''), 'delete', args, image, undefined, settings);
}
