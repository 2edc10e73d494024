/** Errors of the local control plane, each with a code a caller can match on. */

/** A control-plane process exited before it became ready. */
export class ProcessExitedError extends Error {
  override readonly name = 'ProcessExitedError';
  readonly code = 'ERR_PROCESS_EXITED';
  readonly process: string;
  readonly lastLines: readonly string[];
  constructor(process: string, exit: string, lastLines: readonly string[]) {
    super(`${process} exited (${exit}) before it became ready; last lines of its log:\n${lastLines.join('\n')}`);
    this.process = process;
    this.lastLines = lastLines;
  }
}

/** A control-plane process kept running but never answered its health check in time. */
export class NotReadyError extends Error {
  override readonly name = 'NotReadyError';
  readonly code = 'ERR_NOT_READY';
  readonly process: string;
  readonly lastLines: readonly string[];
  constructor(process: string, waitedMs: number, lastProbe: string, lastLines: readonly string[]) {
    super(
      `${process} was not ready after ${waitedMs} ms (last check: ${lastProbe}); last lines of its log:\n` +
        lastLines.join('\n'),
    );
    this.process = process;
    this.lastLines = lastLines;
  }
}

/** A tool the control plane needs (a binary from build.sh, openssl) is missing or failed. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  readonly code = 'ERR_TOOL';
  readonly tool: string;
  constructor(tool: string, message: string, options?: { cause?: unknown }) {
    super(`${tool}: ${message}`, options);
    this.tool = tool;
  }
}

/** The dir's cluster has its Services in a range the Pod network cannot serve. */
export class NoServiceRangeError extends Error {
  override readonly name = 'NoServiceRangeError';
  readonly code = 'ERR_NO_SERVICE_RANGE';
}
