/** Errors of the local storage provisioners, and how they take an answer that says the work is done. */

/** A claim that cannot be wiped, or a StorageClass that belongs to someone else. */
export class StorageError extends Error {
  readonly code: string;
  override readonly name = 'StorageError';
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** Awaits an API call; an error of HTTP status `code` (409 on a create, 404 on a delete) counts as done. */
export async function ignore<T>(code: number, call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if ((err as { code?: unknown }).code === code) return undefined;
    throw err;
  }
}
