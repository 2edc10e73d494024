/**
 * The configuration files of a real node, rendered from plain values: the CNI network (bridge,
 * host-local, portmap), containerd's config, the kubelet's KubeletConfiguration and containerd's
 * registry hosts (hosts.toml). Pure, so what a node is told is unit-tested; node.ts writes them.
 */
import { stringify } from 'yaml';

/**
 * The CNI network of a node: one bridge `cni0` holding the node's Pod range, the node its gateway.
 * host-local keeps its reservations in `ipamDir` (the node's disk), not the machine-wide
 * /var/lib/cni that every node and run would share.
 */
export function cniConfig(podCidr: string, ipamDir: string): string {
  const conf = {
    cniVersion: '1.0.0',
    name: 'eo-pods',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        // Pods send all else to their node, which routes only the cluster's ranges (routes.ts):
        // nothing leaves the machine.
        ipam: {
          type: 'host-local',
          dataDir: ipamDir,
          ranges: [[{ subnet: podCidr }]],
          routes: [{ dst: '0.0.0.0/0' }],
        },
      },
      { type: 'portmap', capabilities: { portMappings: true }, backend: 'nftables' },
    ],
  };
  return JSON.stringify(conf, null, 2);
}

/** What containerd's config names. */
export interface ContainerdConfigInput {
  readonly root: string;
  readonly socket: string;
  readonly sandboxImage: string;
  readonly runc: string;
  readonly cniBinDir: string;
  readonly cniConfDir: string;
  /** Dir of per-registry hosts.toml files (containerd's `config_path`), if any. */
  readonly registryHostsDir?: string;
}

/** containerd's config (version 3): its own root and state, runc with cgroupfs, CNI, registry hosts. */
export function containerdConfig(c: ContainerdConfigInput): string {
  const q = (s: string): string => JSON.stringify(s);
  return [
    'version = 3',
    `root = ${q(c.root)}`,
    `state = "/run/containerd/state"`,
    '[grpc]',
    `  address = ${q(c.socket)}`,
    "[plugins.'io.containerd.cri.v1.images']",
    "  snapshotter = 'overlayfs'",
    "[plugins.'io.containerd.cri.v1.images'.pinned_images]",
    `  sandbox = ${q(c.sandboxImage)}`,
    ...(c.registryHostsDir
      ? ["[plugins.'io.containerd.cri.v1.images'.registry]", `  config_path = ${q(c.registryHostsDir)}`]
      : []),
    "[plugins.'io.containerd.cri.v1.runtime']",
    '  netns_mounts_under_state_dir = true',
    // These machines' root lacks CAP_SYS_RESOURCE (not in the bounding set), so no process may
    // lower its oom_score_adj below 0: runc failed every sandbox (the CRI asks -998). This option,
    // meant for such hosts, raises any lower value to containerd's own (0).
    '  restrict_oom_score_adj = true',
    "[plugins.'io.containerd.cri.v1.runtime'.cni]",
    `  bin_dirs = [${q(c.cniBinDir)}]`,
    `  conf_dir = ${q(c.cniConfDir)}`,
    "[plugins.'io.containerd.cri.v1.runtime'.containerd]",
    "  default_runtime_name = 'runc'",
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]",
    "  runtime_type = 'io.containerd.runc.v2'",
    "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]",
    `  BinaryName = ${q(c.runc)}`,
    '  SystemdCgroup = false',
    '',
  ].join('\n');
}

/** What the KubeletConfiguration names. */
export interface KubeletConfigInput {
  readonly cgroupRoot: string;
  readonly socket: string;
  readonly address: string;
  readonly podCidr: string;
  readonly tlsCertFile: string;
  readonly tlsPrivateKeyFile: string;
  readonly clientCAFile: string;
  /** The cluster DNS address Pods get in their resolv.conf (none: the node's own resolv.conf). */
  readonly clusterDNS?: string;
  /** Taints the Node registers with. */
  readonly taints?: readonly { readonly key: string; readonly value?: string; readonly effect: string }[];
}

/** The kubelet's config: cgroupfs on v1 hierarchies, its own cgroup root, webhook auth. */
export function kubeletConfig(k: KubeletConfigInput): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    cgroupDriver: 'cgroupfs',
    cgroupRoot: k.cgroupRoot,
    failCgroupV1: false,
    failSwapOn: true,
    // Its own oom_score_adj: the default -999 needs CAP_SYS_RESOURCE, which root lacks here.
    oomScoreAdj: 0,
    containerRuntimeEndpoint: `unix://${k.socket}`,
    address: k.address,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: k.address,
    healthzPort: 10248,
    tlsCertFile: k.tlsCertFile,
    tlsPrivateKeyFile: k.tlsPrivateKeyFile,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: k.clientCAFile },
    },
    authorization: { mode: 'Webhook' },
    clusterDomain: 'cluster.local',
    ...(k.clusterDNS ? { clusterDNS: [k.clusterDNS] } : {}),
    ...(k.taints?.length ? { registerWithTaints: k.taints.map((t) => ({ ...t })) } : {}),
    podCIDR: k.podCidr,
    resolvConf: '/etc/resolv.conf',
    // A shared development machine: evict on nothing but a nearly full disk.
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
  });
}

/**
 * containerd's hosts.toml for one upstream registry (the dir `<config_path>/<upstream>/`): pull
 * and resolve from `mirror` (http://HOST:PORT) under the path `/v2/<upstream>/...`, so one local
 * registry holds images of every upstream under their full names and never reaches upstream.
 */
export function registryHosts(upstream: string, mirror: string): string {
  return [
    `server = ${JSON.stringify(`https://${upstream}`)}`,
    '',
    `[host.${JSON.stringify(`${mirror}/v2/${upstream}`)}]`,
    '  capabilities = ["pull", "resolve"]',
    '  override_path = true',
    '',
  ].join('\n');
}

/**
 * containerd's hosts.toml for every other registry (the dir `<config_path>/_default/`): pull and
 * resolve from `mirror` at the image's own path, so an image named after a registry the machine
 * pushes to (`127.0.0.1:PORT/org/name`, a user's `registry.example/org/name`) is the local
 * registry's `org/name`.
 */
export function defaultRegistryHosts(mirror: string): string {
  return [`[host.${JSON.stringify(mirror)}]`, '  capabilities = ["pull", "resolve"]', ''].join('\n');
}

/** The path an image is pushed to in the local registry: its full name under the registry (see registryHosts). */
export function mirrorReference(registryHost: string, image: string): string {
  const first = image.split('/')[0]!;
  const qualified = image.includes('/') && (first.includes('.') || first.includes(':')) ? image : `docker.io/${image}`;
  return `${registryHost}/${qualified}`;
}
