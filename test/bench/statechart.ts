/** Prints how long each chart takes to build and lay out (not a test): `node test/bench/statechart.ts`. */
import { toDot } from '../../statechart/dot.ts';
import { MACHINE_NAMES, machineChart } from '../../statechart/machines.ts';
import { renderSvg } from '../../statechart/render.ts';

await renderSvg('digraph { a }'); // loads the WebAssembly once, as the first render in a process does
for (const name of MACHINE_NAMES) {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await renderSvg(toDot(machineChart(name)));
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(`statechart ${name}: median ${times[2]?.toFixed(0)} ms, min ${times[0]?.toFixed(0)} ms over 5 renders`);
}
