/** Errors of the process node, each with a code a test or a status message can name. */

/** Codes of {@link NodeError}. */
export type NodeErrorCode =
  'ERR_NODE_NOT_ROOT' | 'ERR_NODE_MISSING_TOOL' | 'ERR_IMAGE_PULL' | 'ERR_VOLUME' | 'ERR_CONFIG' | 'ERR_NODE_API';

/** An error of the process node, with a code and the cause. */
export class NodeError extends Error {
  override readonly name = 'NodeError';
  readonly code: NodeErrorCode;

  constructor(code: NodeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** An image this node has no local binaries for; the container stays Waiting (ErrImagePull). */
export class ImagePullError extends NodeError {
  constructor(image: string, why: string) {
    super('ERR_IMAGE_PULL', `failed to pull image "${image}": ${why}`);
  }
}

/** A volume that cannot be set up yet (claim not bound, Secret missing); the Pod waits. */
export class VolumeError extends NodeError {
  constructor(volume: string, why: string, options?: { cause?: unknown }) {
    super('ERR_VOLUME', `MountVolume.SetUp failed for volume "${volume}": ${why}`, options);
  }
}
