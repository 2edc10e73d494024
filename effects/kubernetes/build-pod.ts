/**
 * A member's Pod: one etcd container run from the member's volume, named so the headless
 * Service gives it `<member>.<cluster>.<ns>.svc`, after a check-data init container that
 * refuses a wiped volume. The cluster's scheduling (by default members prefer distinct nodes)
 * and podTemplate overrides are merged in; the etcd and check-data containers, the data volume
 * and the names stay ours.
 */
import type { V1Container, V1EnvVar, V1Pod, V1PodSpec, V1Probe, V1Volume } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdMember } from '../../api/v1alpha1/index.ts';
import { DATA_DIR, DATA_MOUNT, etcdCommand } from './build-etcd-args.ts';
import { restoreInitContainers } from './build-restore.ts';
import { inMemory } from './build-pvc.ts';
import { containerSecurityContext, podSecurityContext } from './build-security.ts';
import { scheduling } from './build-scheduling.ts';
import { CLIENT_PORT, memberClientURL, METRICS_PORT, PEER_PORT } from './build-services.ts';
import { CLIENT_TLS_DIR, memberTLSVolumes, tlsFiles, tlsOf } from './build-tls.ts';
import { DEFAULT_AGENT_IMAGE } from './context.ts';
import { etcdImage, pullSecrets, resourcesOr } from './pod-settings.ts';
import type { PodSettings } from './pod-settings.ts';
import {
  DATA_GUARD_ANNOTATION,
  FORCE_NEW_CLUSTER_ANNOTATION,
  memberLabels,
  ownedMeta,
  pvcName,
  TRUST_ANNOTATION,
} from './meta.ts';

/** Name of the etcd container. */
export const ETCD_CONTAINER = 'etcd';
/** Name of the init container that checks the data is there before etcd starts. */
export const CHECK_DATA_CONTAINER = 'check-data';
/** Name of the data volume. */
export const DATA_VOLUME = 'data';
/** Seconds etcd gets to stop cleanly before it is killed. */
export const TERMINATION_GRACE_SECONDS = 30;

/**
 * Ready means etcd serves: it has a leader and a linearizable read goes through. non_learner is
 * excluded so a started learner is ready too (checked on etcd 3.5.35 and 3.6.16: a learner fails
 * plain /readyz with "not supported for learner" and passes with the exclusion). Every second:
 * each step of a bootstrap or scale waits for a member to be seen ready (the probe's period was
 * most of a learner's start in `make bench`), and etcd's /readyz is cheap. On the metrics port,
 * plain http also with client TLS: the kubelet has no client certificate for --client-cert-auth.
 */
export const readinessProbe: V1Probe = {
  httpGet: { path: '/readyz?exclude=non_learner', port: METRICS_PORT, scheme: 'HTTP' },
  periodSeconds: 1,
  timeoutSeconds: 3,
  failureThreshold: 3,
  successThreshold: 1,
};

function dataVolume(member: EtcdMember): V1Volume {
  if (inMemory(member))
    return { name: DATA_VOLUME, emptyDir: { medium: 'Memory', sizeLimit: String(member.spec.storage.size) } };
  return { name: DATA_VOLUME, persistentVolumeClaim: { claimName: pvcName(member.metadata.name ?? '') } };
}

/**
 * etcdctl in the container (`kubectl exec`) reaches its own member: by Pod IP, or with client
 * TLS by the member's name (which its certificate covers) with the member's own certificate,
 * which anyone who may exec into the Pod can read anyway.
 */
function etcdctlEnv(member: EtcdMember, cluster: EtcdCluster): V1EnvVar[] {
  const ref = { namespace: member.metadata.namespace ?? '', name: member.spec.cluster };
  if (!tlsOf(cluster).client) return [{ name: 'ETCDCTL_ENDPOINTS', value: `http://$(POD_IP):${CLIENT_PORT}` }];
  const f = tlsFiles(CLIENT_TLS_DIR);
  return [
    { name: 'ETCDCTL_ENDPOINTS', value: memberClientURL(ref, member.metadata.name ?? '', true) },
    { name: 'ETCDCTL_CACERT', value: f.ca },
    { name: 'ETCDCTL_CERT', value: f.cert },
    { name: 'ETCDCTL_KEY', value: f.key },
  ];
}

function etcdContainer(member: EtcdMember, cluster: EtcdCluster, settings: PodSettings): V1Container {
  return {
    name: ETCD_CONTAINER,
    image: etcdImage(member.spec.version, settings.etcdImageRepository),
    command: etcdCommand(member, cluster),
    env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }, ...etcdctlEnv(member, cluster)],
    ports: [
      { name: 'client', containerPort: CLIENT_PORT, protocol: 'TCP' },
      { name: 'peer', containerPort: PEER_PORT, protocol: 'TCP' },
      { name: 'metrics', containerPort: METRICS_PORT, protocol: 'TCP' },
    ],
    volumeMounts: [{ name: DATA_VOLUME, mountPath: DATA_MOUNT }, ...memberTLSVolumes(cluster).mounts],
    readinessProbe,
    securityContext: containerSecurityContext(),
    // The log's tail when etcd dies: a raft log behind the cluster's reads as data lost (data-check.ts).
    terminationMessagePolicy: 'FallbackToLogsOnError',
    // The cluster's, whole; else the manager's default (--member-requests), not merged.
    ...resourcesOr(cluster.spec.resources, settings.memberResources),
  };
}

/**
 * Once etcd has run on the volume, an empty data dir means the data was lost: the check then
 * fails (exit 3) instead of letting etcd start a new, empty member. It runs as etcd's user (the
 * Pod's), so it reads etcd's 0700 dirs; the mount is read-only but to write the guard. A Memory member gets no check: each new
 * Pod starts with an empty emptyDir, and the member machine counts that Pod's loss as data loss.
 */
function checkDataContainer(member: EtcdMember, agentImage: string): V1Container[] {
  if (inMemory(member)) return [];
  const initialized = member.status?.dataInitialized === true;
  const expect = initialized ? ['--expect-data'] : [];
  // A guarded member's first Pod writes the guard (so mounts the volume writable); later ones read it.
  const guarded = member.metadata.annotations?.[DATA_GUARD_ANNOTATION] !== undefined && member.metadata.uid;
  const guard = guarded ? [`--guard=${member.metadata.uid}`] : [];
  return [
    {
      name: CHECK_DATA_CONTAINER,
      image: agentImage,
      args: ['agent', 'check-data', `--data-dir=${DATA_DIR}`, ...expect, ...guard],
      volumeMounts: [{ name: DATA_VOLUME, mountPath: DATA_MOUNT, readOnly: initialized || !guarded }],
      securityContext: containerSecurityContext(),
      terminationMessagePolicy: 'FallbackToLogsOnError',
    },
  ];
}

/**
 * The Pod of a member, owned by its EtcdMember; agentImage runs its check-data init container,
 * settings are the manager's (etcd image repository, pull Secrets, default resources).
 */
export function buildPod(
  member: EtcdMember,
  cluster: EtcdCluster,
  agentImage = DEFAULT_AGENT_IMAGE,
  settings: PodSettings = {},
): V1Pod {
  const name = member.metadata.name ?? '';
  const extra = cluster.spec.additionalMetadata;
  const template = cluster.spec.podTemplate;
  const ours = memberLabels(member.spec.cluster, name);
  const meta = ownedMeta(name, member.metadata.namespace ?? '', ours, member, {
    labels: { ...extra?.labels, ...template?.metadata?.labels },
    annotations: {
      ...extra?.annotations,
      ...template?.metadata?.annotations,
      ...(member.spec.trust !== undefined ? { [TRUST_ANNOTATION]: member.spec.trust } : {}),
      ...(member.spec.forceNewCluster ? { [FORCE_NEW_CLUSTER_ANNOTATION]: member.spec.forceNewCluster } : {}),
    },
  });
  const user: Partial<V1PodSpec> = template?.spec ?? {};
  // A restored cluster's seed: its data dir comes from the snapshot before etcd first starts.
  const restore = restoreInitContainers(
    member,
    cluster,
    agentImage,
    etcdImage(member.spec.version, settings.etcdImageRepository),
    DATA_VOLUME,
  );
  const tls = memberTLSVolumes(cluster);
  const spec: V1PodSpec = {
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
    enableServiceLinks: false,
    // Neither etcd nor the agent calls the API server; a template's sidecar that does may turn it on.
    automountServiceAccountToken: false,
    ...user,
    ...pullSecrets(settings, user.imagePullSecrets),
    // The cluster's affinity and spread, or members preferring distinct nodes (build-scheduling.ts).
    ...scheduling(cluster, user),
    // The restricted Pod Security Standard; a template's fields (another runAsUser, say) win.
    securityContext: { ...podSecurityContext(), ...user.securityContext },
    // What makes this Pod a member stays ours whatever the template says.
    hostname: name,
    subdomain: member.spec.cluster,
    initContainers: [
      ...restore.containers,
      ...checkDataContainer(member, agentImage),
      ...(user.initContainers ?? []).filter((c) => c.name !== CHECK_DATA_CONTAINER),
    ],
    containers: [
      etcdContainer(member, cluster, settings),
      ...(user.containers ?? []).filter((c) => c.name !== ETCD_CONTAINER),
    ],
    volumes: [
      dataVolume(member),
      ...restore.volumes,
      ...tls.volumes,
      ...(user.volumes ?? []).filter(
        (v) => ![dataVolume(member), ...restore.volumes, ...tls.volumes].some((o) => o.name === v.name),
      ),
    ],
  };
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec };
}
