/**
 * Runs nftables scripts, installing the Debian package `nftables` first when `nft` is missing
 * and we are root (the machines this runs on have apt but no nft by default).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Log } from '../types.ts';

const run = promisify(execFile);

/** nft is missing and cannot be installed, or it refused a script. */
export class NftError extends Error {
  readonly code: string;
  override readonly name = 'NftError';
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

const SBIN = '/usr/sbin:/sbin:/usr/bin:/bin';

function env(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${process.env['PATH'] ?? ''}:${SBIN}` };
}

async function haveNft(): Promise<boolean> {
  return run('nft', ['--version'], { env: env() }).then(
    () => true,
    () => false,
  );
}

/** Makes sure `nft` runs, installing `nftables` with apt-get when root; throws NftError otherwise. */
export async function ensureNft(log: Log): Promise<void> {
  if (await haveNft()) return;
  if (process.getuid?.() !== 0) {
    throw new NftError('ERR_NFT_MISSING', 'isolate() needs nftables: run `apt-get install -y nftables` as root');
  }
  log('installing the Debian package nftables (isolate() needs nft)');
  const apt = { env: { ...env(), DEBIAN_FRONTEND: 'noninteractive' }, maxBuffer: 64 << 20 };
  try {
    await run('apt-get', ['install', '-y', 'nftables'], apt).catch(async () => {
      await run('apt-get', ['update'], apt);
      await run('apt-get', ['install', '-y', 'nftables'], apt);
    });
  } catch (err) {
    throw new NftError('ERR_NFT_INSTALL', 'could not install the Debian package nftables', { cause: err });
  }
  if (!(await haveNft())) throw new NftError('ERR_NFT_MISSING', 'nftables installed but nft does not run');
}

/** Loads an nft script in one transaction, in the machine's network namespace or the named one. */
export async function nft(script: string, netns?: string): Promise<void> {
  const [cmd, args] = netns ? ['ip', ['netns', 'exec', netns, 'nft', '-f', '-']] : ['nft', ['-f', '-']];
  await new Promise<void>((resolve, reject) => {
    const child = execFile(cmd, args, { env: env() }, (err, _stdout, stderr) => {
      if (err) reject(new NftError('ERR_NFT_RULES', `nft refused the rules: ${stderr.trim()}`, { cause: err }));
      else resolve();
    });
    child.stdin?.end(script);
  });
}

/** The tables nft lists now (none when nft is missing). */
export async function nftTables(): Promise<{ family: string; name: string }[]> {
  const stdout = await new Promise<string>((resolve) => {
    execFile('nft', ['list', 'tables'], { env: env() }, (_err, out) => resolve(out ?? ''));
  });
  return stdout.split('\n').flatMap((line) => {
    const [word, family, name] = line.trim().split(/\s+/);
    return word === 'table' && family && name ? [{ family, name }] : [];
  });
}
