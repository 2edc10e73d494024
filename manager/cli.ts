#!/usr/bin/env node
/**
 * `etcd-operator`: the operator's one command line.
 *
 *   etcd-operator manager [flags]                              the operator itself
 *   etcd-operator journal NAME [-n NS] [--follow] [--json]   a cluster's timeline, and why
 *   etcd-operator statechart MACHINE | NAME --db PATH          a machine's chart, or an object's path through it
 *   etcd-operator version                                      the operator's version
 *   etcd-operator kubectl-etcd COMMAND NAME [flags]            `kubectl etcd` (plugin/kubectl-etcd runs it)
 *   etcd-operator agent check-data --data-dir DIR [--expect-data]   in a member's Pod: is its data there
 *   etcd-operator agent snapshot --endpoint URL (--s3-bucket B --s3-key K | --file PATH)   in a snapshot Job
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runAgentCommand } from './agent.ts';

// Each command loads only its own modules: an agent in a Job starts without the machines, xstate
// and SQLite (about 0.2 s of a snapshot's time on a 2-core node, docs/performance.md).

/** The usage text, with the statechart command's forms named by its module. */
async function usage(): Promise<string> {
  const { MACHINE_FORM } = await import('../statechart/names.ts');
  return `usage: etcd-operator COMMAND [ARGS]

commands:
  manager [FLAGS]  run the operator (etcd-operator manager --help lists the flags)
  journal NAME [-n NAMESPACE] [--kind KIND] [--tail STEPS] [--follow] [--json] [--db PATH]
                 print a cluster's timeline (event -> transition -> intent -> outcome) and why
  ${MACHINE_FORM} [--format svg|dot|json] [-o FILE]
  statechart NAME [-n NAMESPACE] [--member M] [--last N] [--format F] [-o FILE] --db PATH
                 draw a machine's state chart, or an object's current state and path from the journal
  version        print the operator's version
  kubectl-etcd COMMAND NAME [FLAGS]
                 the kubectl plugin: status, snapshot, restore, defrag, why, statechart (docs/kubectl-etcd.md)
  agent check-data --data-dir DIR [--expect-data]
                 run in a member's Pod: exit 3 when etcd data expected in DIR is gone
  agent snapshot --endpoint URL (--s3-bucket B --s3-key K | --file PATH)
                 run in a snapshot Job: stream a member's snapshot there and check it
`;
}

/** Runs one command; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  const io = {
    stdout: (s: string) => void process.stdout.write(s),
    stderr: (s: string) => void process.stderr.write(s),
  };
  switch (command) {
    case 'manager': {
      if (rest.includes('--help') || rest.includes('-h')) {
        const { MANAGER_USAGE } = await import('./config.ts');
        io.stdout(MANAGER_USAGE);
        return 0;
      }
      // A long-running process whose live heap is small next to what V8 lets it grow to by default:
      // favour memory over speed (docs/performance.md, "The manager at scale"). Set before the
      // manager's modules load, so that its heap is sized this way from the start.
      setFlagsFromString('--optimize-for-size');
      const { runManager } = await import('./main.ts');
      const code = await runManager(rest);
      // Everything the manager opened is closed by now, the journal too. What can still hold the
      // process is not its own: a TCP connect grpc-js began to a member that never answered, which
      // it does not cancel when its channel closes (Linux gives up after 127 s of SYN retries).
      return process.exit(code);
    }
    case 'journal': {
      const { runJournalCommand } = await import('../journal/index.ts');
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      return runJournalCommand(rest, io, { signal: abort.signal });
    }
    case 'statechart': {
      const { runStatechartCommand } = await import('../statechart/cli.ts');
      return runStatechartCommand(rest, io);
    }
    case 'agent':
      return runAgentCommand(rest, io);
    case 'kubectl-etcd': {
      const { runKubectlEtcd } = await import('../plugin/cli.ts');
      const abort = new AbortController();
      process.once('SIGINT', () => abort.abort());
      return runKubectlEtcd(rest, io, process.env, abort.signal);
    }
    case 'version': {
      const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as {
        version: string;
      };
      io.stdout(`etcd-operator ${pkg.version} (node ${process.version})\n`);
      return 0;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout(await usage());
      return command === undefined ? 2 : 0;
    default:
      io.stderr(`etcd-operator: unknown command '${command}'\n${await usage()}`);
      return 2;
  }
}

if (import.meta.main) process.exitCode = await main(process.argv.slice(2));
