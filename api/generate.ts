/** `make generate`: writes the CRDs, TypeScript types and docs/api.md rendered from api/, the chart README's values, its alerting rules and dashboard, and the state charts. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderStatechartFiles } from '../statechart/docs.ts';
import { renderChartReadme } from '../hack/chart-readme.ts';
import { renderMonitoringFiles } from '../manager/metrics-files.ts';
import { renderAll } from './render.ts';

const root = join(import.meta.dirname, '..');
let changed = 0;
for (const [path, content] of [
  ...renderAll(),
  renderChartReadme(),
  ...renderMonitoringFiles(),
  ...(await renderStatechartFiles()),
]) {
  const file = join(root, path);
  let before = '';
  try {
    before = readFileSync(file, 'utf8');
  } catch {
    // a new file
  }
  if (before === content) continue;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  console.log(`generate: wrote ${path}`);
  changed++;
}
console.log(`generate: ${changed} file(s) changed`);
