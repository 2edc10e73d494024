/**
 * The README's "Install on your Kubernetes" as a script: the indented command lines between its
 * install markers, so the install e2e runs what the README says and breaks when the two part.
 */

/** The README's marker before the install commands (an HTML comment: not rendered). */
export const INSTALL_START = '<!-- install:';
/** The marker after them. */
export const INSTALL_END = '<!-- end of install -->';
/** The README's one line naming the user's registry, which the e2e replaces with the local one. */
const REGISTRY_LINE = /^REGISTRY=\S+(\s+#.*)?$/;

/** The README's install commands, one bash script: its code lines between the markers, dedented. */
export function installCommands(readme: string): string {
  const start = readme.indexOf(INSTALL_START);
  const end = readme.indexOf(INSTALL_END);
  if (start < 0 || end < start) throw new Error(`README.md has no "${INSTALL_START}" ... "${INSTALL_END}" section`);
  const lines = readme
    .slice(start, end)
    .split('\n')
    .filter((l) => l.startsWith('    '))
    .map((l) => l.slice(4));
  return `${lines.join('\n')}\n`;
}

/** The script with its one `REGISTRY=...` line set to `registry`; throws unless there is exactly one. */
export function withRegistry(script: string, registry: string): string {
  const lines = script.split('\n');
  const at = lines.flatMap((l, i) => (REGISTRY_LINE.test(l) ? [i] : []));
  if (at.length !== 1) throw new Error(`the install commands set REGISTRY ${at.length} times, not once`);
  lines[at[0]!] = `REGISTRY=${registry}`;
  return lines.join('\n');
}
