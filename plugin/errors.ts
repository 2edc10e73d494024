/** A command that cannot go on, with what to do instead: `kubectl etcd` exits 1 and prints it. */
export class PluginError extends Error {
  override readonly name = 'PluginError';
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}
