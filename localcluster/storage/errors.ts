/** Errors of the local storage provisioner. */

/** A claim that cannot be wiped, or a StorageClass that belongs to someone else. */
export class StorageError extends Error {
  readonly code: string;
  override readonly name = 'StorageError';
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}
