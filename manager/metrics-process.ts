/**
 * The process's own metrics under the names Prometheus's Node client (prom-client) gives them, so
 * dashboards made for Node processes work unchanged: CPU, memory, file descriptors, start time,
 * the event loop's delay, the V8 heap and its spaces, and garbage collection.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import { monitorEventLoopDelay, PerformanceObserver, constants } from 'node:perf_hooks';
import { Family, Gauge, Histogram, type Metric } from './metrics-families.ts';

const START_SECONDS = Math.round(Date.now() / 1000 - process.uptime());
const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** A number read from Linux's /proc, or null elsewhere (the metric is then left out). */
function proc(read: () => number): () => Iterable<readonly [Record<string, string>, number]> {
  return () => {
    try {
      return [[{}, read()]];
    } catch {
      return [];
    }
  };
}

/** The process metrics, read at scrape time (the event loop and GC observed from the first call). */
export function processMetrics(): Metric[] {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const gc = new Histogram(
    'nodejs_gc_duration_seconds',
    'Garbage collection duration by kind.',
    [0.001, 0.01, 0.1, 1, 2, 5],
  );
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gc.observe(e.duration / 1000, {
        kind: GC_KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other',
      });
  }).observe({ entryTypes: ['gc'] });
  const cpu = (): NodeJS.CpuUsage => process.cpuUsage();
  const seconds = (ns: number): number => ns / 1e9;
  const [major = '0', minor = '0', patch = '0'] = process.versions.node.split('.');
  const active = process as unknown as { getActiveResourcesInfo?: () => string[] };
  return [
    new Family(
      'process_cpu_user_seconds_total',
      'Total user CPU time spent in seconds.',
      () => [[{}, cpu().user / 1e6]],
      'counter',
    ),
    new Family(
      'process_cpu_system_seconds_total',
      'Total system CPU time spent in seconds.',
      () => [[{}, cpu().system / 1e6]],
      'counter',
    ),
    new Family(
      'process_cpu_seconds_total',
      'Total user and system CPU time spent in seconds.',
      () => {
        const c = cpu();
        return [[{}, (c.user + c.system) / 1e6]];
      },
      'counter',
    ),
    new Gauge(
      'process_start_time_seconds',
      'Start time of the process since unix epoch in seconds.',
      () => START_SECONDS,
    ),
    new Gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => process.memoryUsage.rss()),
    new Family(
      'process_virtual_memory_bytes',
      'Virtual memory size in bytes.',
      proc(() => statusKb('VmSize') * 1024),
    ),
    new Family(
      'process_heap_bytes',
      'Process heap size in bytes.',
      proc(() => statusKb('VmData') * 1024),
    ),
    new Family(
      'process_open_fds',
      'Number of open file descriptors.',
      proc(() => readdirSync('/proc/self/fd').length),
    ),
    new Family('process_max_fds', 'Maximum number of open file descriptors.', proc(maxFds)),
    new Family(
      'nodejs_eventloop_lag_seconds',
      'Lag of event loop in seconds (its mean delay since the last scrape).',
      () => {
        const mean = Number.isNaN(delay.mean) ? 0 : delay.mean;
        return [[{}, seconds(mean)]];
      },
    ),
    new Family('nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.', () => [
      [{}, seconds(delay.percentile(50))],
    ]),
    new Family('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.', () => [
      [{}, seconds(delay.percentile(99))],
    ]),
    new Family('nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', () => {
      const max = seconds(delay.max);
      delay.reset(); // each scrape reads the delays since the one before
      return [[{}, max]];
    }),
    new Family('nodejs_active_resources_total', 'Number of active resources keeping the event loop alive.', () =>
      active.getActiveResourcesInfo ? [[{}, active.getActiveResourcesInfo().length]] : [],
    ),
    new Gauge(
      'nodejs_heap_size_total_bytes',
      'Process heap size from Node.js in bytes.',
      () => process.memoryUsage().heapTotal,
    ),
    new Gauge(
      'nodejs_heap_size_used_bytes',
      'Process heap size used from Node.js in bytes.',
      () => process.memoryUsage().heapUsed,
    ),
    new Gauge(
      'nodejs_external_memory_bytes',
      'Node.js external memory size in bytes.',
      () => process.memoryUsage().external,
    ),
    ...(['total', 'used', 'available'] as const).map(
      (what) =>
        new Family(
          `nodejs_heap_space_size_${what}_bytes`,
          `Process heap space size ${what} from Node.js in bytes.`,
          () =>
            getHeapSpaceStatistics().map(
              (s) =>
                [
                  { space: s.space_name.replace(/_space$/, '') },
                  what === 'total' ? s.space_size : what === 'used' ? s.space_used_size : s.space_available_size,
                ] as const,
            ),
        ),
    ),
    new Family('nodejs_version_info', 'Node.js version info.', () => [
      [{ version: process.version, major, minor, patch }, 1],
    ]),
    gc,
  ];
}

/** A field of /proc/self/status in kB (VmSize, VmData). */
function statusKb(field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  if (!m) throw new Error(`no ${field} in /proc/self/status`);
  return Number(m[1]);
}

/** The soft limit on open files, from /proc/self/limits. */
function maxFds(): number {
  const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  if (!m) throw new Error('no open-files limit in /proc/self/limits');
  return Number(m[1]);
}
