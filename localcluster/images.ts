/**
 * Images the e2e tests run besides etcd and the operator's own, by their real names:
 * realnode/images.ts builds each and the registry the nodes pull from serves it.
 */

/**
 * A shell and the usual tools for tests that run commands in a Pod: BusyBox 1.35.0 built static
 * against glibc (Debian's busybox-static, hack/node-deps.sh installs it), laid out like upstream's
 * image of that variant (every applet a link in /bin, command `sh`).
 */
export const BUSYBOX_IMAGE = 'docker.io/library/busybox:1.35.0-glibc';

/** BusyBox's release in BUSYBOX_IMAGE's tag, which the machine's busybox-static must be. */
export const BUSYBOX_VERSION = '1.35.0';
