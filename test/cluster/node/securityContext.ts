/**
 * Who a container's process runs as, from its Pod's and its own securityContext, and the
 * setpriv arguments that switch to it once the sandbox script has made the mounts as root.
 */
import type { V1Container, V1PodSecurityContext } from '@kubernetes/client-node';
import { NodeError } from './errors.ts';

/** A container process's user, groups and what it may gain. */
export interface Identity {
  readonly uid: number;
  readonly gid: number;
  /** Supplementary groups: fsGroup, then supplementalGroups. */
  readonly groups: readonly number[];
  /** allowPrivilegeEscalation: false, which the runtime turns into the kernel's no_new_privs. */
  readonly noNewPrivs: boolean;
  /** capabilities.drop in setpriv's spelling (lower case, no CAP_; `all` for ALL). */
  readonly drop: readonly string[];
}

/** How every container ran before securityContext was honoured, and still runs without one. */
export const ROOT: Identity = { uid: 0, gid: 0, groups: [], noNewPrivs: false, drop: [] };

/** Whether the identity is plain root: nothing to switch, the command is exec'd as it is. */
export function isRoot(id: Identity): boolean {
  return id.uid === 0 && id.gid === 0 && !id.groups.length && !id.noNewPrivs && !id.drop.length;
}

/**
 * The identity the kubelet gives a container: its own runAsUser/runAsGroup over the Pod's.
 * The node knows no image's USER or /etc/passwd, so no runAsUser means root and no runAsGroup
 * gid 0. runAsNonRoot with uid 0 is refused with the kubelet's words (a NodeError ERR_CONFIG,
 * reported as CreateContainerConfigError). `pod` names the Pod in that message.
 */
export function containerIdentity(podContext: V1PodSecurityContext | undefined, c: V1Container, pod = ''): Identity {
  const own = c.securityContext;
  const runAsUser = own?.runAsUser ?? podContext?.runAsUser;
  const uid = runAsUser ?? 0;
  if ((own?.runAsNonRoot ?? podContext?.runAsNonRoot) && uid === 0) {
    const why =
      runAsUser === undefined
        ? 'container has runAsNonRoot and image will run as root'
        : "container's runAsUser breaks non-root policy";
    throw new NodeError('ERR_CONFIG', `${why} (pod: "${pod}", container: ${c.name})`);
  }
  const groups = [
    ...(podContext?.fsGroup !== undefined ? [podContext.fsGroup] : []),
    ...(podContext?.supplementalGroups ?? []),
  ];
  const drop = (own?.capabilities?.drop ?? []).map((cap) => cap.toLowerCase().replace(/^cap_/, ''));
  return {
    uid,
    gid: own?.runAsGroup ?? podContext?.runAsGroup ?? 0,
    groups: [...new Set(groups)],
    noNewPrivs: own?.allowPrivilegeEscalation === false,
    drop: drop.includes('all') ? ['all'] : drop,
  };
}

/** setpriv's options that give a process the identity (from root, before it execs the command). */
export function setprivArgs(id: Identity): string[] {
  const drop = id.drop.map((cap) => `-${cap}`).join(',');
  return [
    `--reuid=${id.uid}`,
    `--regid=${id.gid}`,
    id.groups.length ? `--groups=${id.groups.join(',')}` : '--clear-groups',
    ...(id.noNewPrivs ? ['--no-new-privs'] : []),
    ...(drop ? [`--inh-caps=${drop}`, `--bounding-set=${drop}`] : []),
  ];
}

/** argv run as the identity: through setpriv unless it is plain root (exec probes, hooks, exec()). */
export function asIdentity(id: Identity, argv: readonly string[]): string[] {
  return isRoot(id) ? [...argv] : ['setpriv', ...setprivArgs(id), '--', ...argv];
}
