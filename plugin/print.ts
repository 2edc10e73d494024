/** `-o json|yaml`: an object as a script reads it. */
import { stringify } from 'yaml';
import type { Output } from './args.ts';
import type { PluginIO } from './wait.ts';

/** Prints `value` as JSON or YAML (text is the caller's own rendering). */
export function printObject(io: PluginIO, value: unknown, output: Exclude<Output, 'text'>): void {
  io.stdout(output === 'json' ? `${JSON.stringify(value, null, 2)}\n` : stringify(value, { lineWidth: 0 }));
}
