/**
 * The `restricted` Pod Security Standard's controls (kubernetes.io pod-security-standards,
 * policy version latest, which includes Baseline), as a list of what a Pod spec breaks. The
 * real check is the API server's PodSecurity admission (test/e2e/pod-security.test.ts); this
 * one lets the builder tests say which field of which container is wrong.
 */
import type { V1Container, V1PodSpec } from '@kubernetes/client-node';

/** Volume types the restricted profile allows. */
const VOLUMES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
];
/** Sysctls the baseline profile allows. */
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

/** What the Pod spec breaks, one line per field; empty when it passes. */
export function restrictedViolations(spec: V1PodSpec): string[] {
  const out: string[] = [];
  const pod = spec.securityContext ?? {};
  const all: [string, V1Container][] = [
    ...(spec.initContainers ?? []).map((c) => [`initContainers[${c.name}]`, c] as [string, V1Container]),
    ...spec.containers.map((c) => [`containers[${c.name}]`, c] as [string, V1Container]),
  ];
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) out.push('host namespaces');
  for (const v of spec.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== 'name');
    if (!type || !VOLUMES.includes(type)) out.push(`volume ${v.name}: type ${type}`);
  }
  for (const s of pod.sysctls ?? []) if (!SAFE_SYSCTLS.has(s.name)) out.push(`sysctl ${s.name}`);
  if (pod.runAsUser === 0) out.push('pod runAsUser 0');
  if (pod.seLinuxOptions?.user || pod.seLinuxOptions?.role) out.push('pod seLinuxOptions user/role');
  if (pod.appArmorProfile?.type === 'Unconfined') out.push('pod appArmorProfile Unconfined');
  const podSeccomp = pod.seccompProfile?.type;
  if (podSeccomp !== undefined && podSeccomp !== 'RuntimeDefault' && podSeccomp !== 'Localhost')
    out.push(`pod seccompProfile ${podSeccomp}`);
  for (const [where, c] of all) {
    const sc = c.securityContext ?? {};
    if (sc.privileged) out.push(`${where}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${where}: allowPrivilegeEscalation is not false`);
    if (!(sc.runAsNonRoot ?? pod.runAsNonRoot)) out.push(`${where}: runAsNonRoot is not true`);
    if (sc.runAsUser === 0) out.push(`${where}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? podSeccomp;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${where}: seccompProfile ${seccomp}`);
    if (!sc.capabilities?.drop?.includes('ALL')) out.push(`${where}: capabilities do not drop ALL`);
    for (const cap of sc.capabilities?.add ?? []) if (cap !== 'NET_BIND_SERVICE') out.push(`${where}: adds ${cap}`);
    if ((c.ports ?? []).some((p) => p.hostPort)) out.push(`${where}: hostPort`);
    if (sc.procMount && sc.procMount !== 'Default') out.push(`${where}: procMount ${sc.procMount}`);
    if (sc.seLinuxOptions?.user || sc.seLinuxOptions?.role) out.push(`${where}: seLinuxOptions user/role`);
    if (sc.appArmorProfile?.type === 'Unconfined') out.push(`${where}: appArmorProfile Unconfined`);
    if (sc.windowsOptions?.hostProcess) out.push(`${where}: hostProcess`);
  }
  return out;
}
