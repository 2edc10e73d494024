/**
 * A Pod's container as a process of this machine: the real nodes share the machine's pid
 * namespace, so a container's processes are the machine's, each in the cgroup named after the
 * container's id.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';

/** The pid of a process of the Pod's running container `container` (`containerd://<id>`), or throws. */
export function containerPid(pod: V1Pod, container: string): number {
  const containerID = pod.status?.containerStatuses?.find((c) => c.name === container)?.containerID ?? '';
  const id = /^containerd:\/\/([0-9a-f]+)$/.exec(containerID)?.[1];
  const pid =
    id &&
    readdirSync('/proc').find((e) => {
      try {
        return /^\d+$/.test(e) && readFileSync(`/proc/${e}/cgroup`, 'utf8').includes(id);
      } catch {
        return false; // gone since the listing
      }
    });
  if (!pid) throw new Error(`Pod ${pod.metadata?.name} has no running ${container} process (${containerID})`);
  return Number(pid);
}
