/** State charts of the machines, drawn from their definitions, with a journal's path overlaid. */
export { chartOf, type Chart, type ChartEdge, type ChartState } from './model.ts';
export {
  describeState,
  isMachineName,
  machineChart,
  machineNamed,
  MACHINE_NAMES,
  type MachineName,
} from './machines.ts';
export { overlayOf, chainOf, type Overlay, type OverlayInput, type JournalStep } from './overlay.ts';
export { overlayInputFrom, problemText, stepsOf, StatechartNotFoundError } from './from-journal.ts';
export { renderChart, FORMATS, type Format } from './output.ts';
export { runStatechartCommand, STATECHART_USAGE } from './cli.ts';
