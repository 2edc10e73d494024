/**
 * The images the real nodes pull, written by image.ts from binaries of this machine and laid out
 * like their upstream images, under their real names: the sandbox (pause), etcd of each release
 * the tests run, versitygw (the snapshot tests' S3 server), cert-manager's controller and BusyBox
 * (a shell for tests).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { binary, pinnedRelease } from '../controlplane/tools.ts';
import { CERT_MANAGER_CONTROLLER_IMAGE, CONTROLLER_ENTRYPOINT } from '../cert-manager/manifest.ts';
import { BUSYBOX_IMAGE, BUSYBOX_VERSION } from '../images.ts';
import type { ImageSpec } from './image.ts';
import { sandboxImage } from './node.ts';

const exec = promisify(execFile);

/** etcd releases whose images the nodes can pull (those build.sh builds: tools/etcd-*). */
export const ETCD_IMAGE_VERSIONS = ['3.5.35', '3.6.16', '3.7.3'];

/** Where Debian's busybox-static puts its binary. */
const BUSYBOX = '/bin/busybox';

/** Every image the nodes pull from the local registry. */
export async function imageSpecs(): Promise<ImageSpec[]> {
  const specs: ImageSpec[] = [
    { name: sandboxImage, files: [{ src: await binary('pause'), dest: '/pause' }], entrypoint: ['/pause'] },
  ];
  for (const v of ETCD_IMAGE_VERSIONS) specs.push(await etcdImage(v));
  const busybox = await busyboxRoot();
  specs.push({ name: BUSYBOX_IMAGE, ...busybox, cmd: ['sh'] });
  specs.push(await versitygwImage(busybox));
  specs.push(certManagerControllerImage(await binary('cert-manager')));
  return specs;
}

/**
 * quay.io/jetstack/cert-manager-controller:vX as the release's Containerfile.controller makes it
 * on its base, distroless static-debian13:nonroot: the controller (`bin`, build.sh's of the
 * release's packages) at /app/cmd/controller/controller, the entrypoint; the base's user nonroot
 * (65532: the Containerfile's own `USER 1000` went before v1.21.1), its /etc/passwd and
 * /etc/group, its home as the working dir, and /tmp open to all. Left out: the base's CA bundle,
 * tzdata and the licenses (the controller dials only the API server, with the cluster's CA).
 */
export function certManagerControllerImage(bin: string): ImageSpec {
  return {
    name: CERT_MANAGER_CONTROLLER_IMAGE,
    files: [
      { src: bin, dest: CONTROLLER_ENTRYPOINT },
      { content: DISTROLESS_PASSWD, dest: '/etc/passwd', mode: 0o644 },
      { content: DISTROLESS_GROUP, dest: '/etc/group', mode: 0o644 },
    ],
    dirs: ['/home/nonroot', '/root', { path: '/tmp', mode: 0o1777 }],
    entrypoint: [CONTROLLER_ENTRYPOINT],
    user: DISTROLESS_NONROOT,
    workingDir: '/home/nonroot',
  };
}

/** The uid (and gid) of distroless's nonroot user, its nonroot images' config.User. */
export const DISTROLESS_NONROOT = '65532';

/** The users of distroless's base images. */
const DISTROLESS_PASSWD = `root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
`;

/** Their groups. */
const DISTROLESS_GROUP = `root:x:0:
nobody:x:65534:
tty:x:5:
staff:x:50:
nonroot:x:65532:
`;

/** quay.io/coreos/etcd:vX as upstream's: the three tools in /usr/local/bin, etcd the command. */
async function etcdImage(version: string): Promise<ImageSpec> {
  const etcdDir = path.dirname(await binary('etcd', version));
  const tools = ['etcd', 'etcdctl', 'etcdutl'];
  for (const t of tools.slice(1)) await binary(t, version);
  return {
    name: `quay.io/coreos/etcd:v${version}`,
    files: tools
      .filter((t) => existsSync(path.join(etcdDir, t)))
      .map((t) => ({ src: path.join(etcdDir, t), dest: `/usr/local/bin/${t}` })),
    dirs: ['/var/etcd', '/var/lib/etcd', '/tmp'],
    cmd: ['/usr/local/bin/etcd'],
  };
}

/** Files, links and dirs of a root holding BusyBox. */
type Root = Required<Pick<ImageSpec, 'files' | 'dirs' | 'links'>>;

/**
 * A BusyBox root as upstream's busybox image has it (and Alpine, versitygw's base, the same way):
 * /bin/busybox with every applet a hard link beside it, /etc/passwd and /etc/group of the usual
 * system users, /tmp open to all. The binary is the machine's busybox-static, at BUSYBOX_VERSION.
 */
async function busyboxRoot(): Promise<Root> {
  const banner = existsSync(BUSYBOX) ? (await exec(BUSYBOX, [], { maxBuffer: 1 << 20 })).stdout : '';
  const found = /^BusyBox v(\S+)/.exec(banner)?.[1];
  if (found !== BUSYBOX_VERSION)
    throw new Error(
      `${BUSYBOX_IMAGE} needs BusyBox ${BUSYBOX_VERSION} at ${BUSYBOX} (Debian's busybox-static: hack/node-deps.sh); found ${found ?? 'none'}`,
    );
  const { stdout } = await exec(BUSYBOX, ['--list'], { maxBuffer: 1 << 20 });
  const applets = stdout.split('\n').filter((a) => a && a !== 'busybox');
  return {
    files: [
      { src: BUSYBOX, dest: '/bin/busybox' },
      { content: PASSWD, dest: '/etc/passwd', mode: 0o644 },
      { content: GROUP, dest: '/etc/group', mode: 0o644 },
    ],
    links: applets.map((a) => ({ dest: `/bin/${a}`, target: '/bin/busybox' })),
    dirs: ['/root', '/home', '/usr/sbin', '/var/spool/mail', '/var/www', { path: '/tmp', mode: 0o1777 }],
  };
}

/**
 * versity/versitygw:vX as upstream's Dockerfile makes it: its base's shell (BusyBox, as Alpine's),
 * /usr/local/bin/versitygw (build.sh's, of that release), the release's docker-entrypoint.sh as
 * the entrypoint, and /tmp/vgw (its IAM and setup dir).
 */
async function versitygwImage(base: Root): Promise<ImageSpec> {
  const gateway = await binary('versitygw');
  const version = pinnedRelease('versitygw', 'github.com/versity/versitygw');
  const entrypoint = await binary('versitygw-entrypoint');
  return {
    name: `versity/versitygw:${version}`,
    files: [
      ...base.files,
      { src: gateway, dest: '/usr/local/bin/versitygw' },
      { src: entrypoint, dest: '/usr/local/bin/docker-entrypoint.sh' },
    ],
    links: base.links,
    dirs: [...base.dirs, '/tmp/vgw'],
    entrypoint: ['/usr/local/bin/docker-entrypoint.sh'],
  };
}

/** The system users of upstream's busybox image (buildroot's skeleton). */
const PASSWD = `root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
`;

/** Their groups. */
const GROUP = `root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
lp:x:7:
mail:x:8:
kmem:x:9:
wheel:x:10:root
cdrom:x:11:
dialout:x:18:
floppy:x:19:
video:x:28:
audio:x:29:
tape:x:32:
www-data:x:33:
operator:x:37:
utmp:x:43:
plugdev:x:46:
staff:x:50:
lock:x:54:
netdev:x:82:
users:x:100:
nobody:x:65534:
`;
