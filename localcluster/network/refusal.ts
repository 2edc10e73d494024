/**
 * The machine's rules for the Service range: a ClusterIP that no Service rule DNATed (a port with
 * no ready endpoint) is refused at once (TCP reset), from the machine and from what it forwards,
 * rather than routed off the machine to time out; and the removal of what a killed run left.
 */
import type { Log } from '../types.ts';
import { ensureNft, nft, nftTables } from './nft.ts';
import { SERVICE_CIDR, TABLE_PREFIX } from './podNetwork.ts';

/** The table of these rules. */
export const REFUSAL_TABLE = `${TABLE_PREFIX}refuse`;

/** The ruleset, as an `nft -f` script that replaces it. */
export function refusalRules(): string {
  const refuse = [
    `    ip daddr ${SERVICE_CIDR} meta l4proto tcp reject with tcp reset`,
    `    ip daddr ${SERVICE_CIDR} reject`,
  ];
  return [
    `table ip ${REFUSAL_TABLE} {}`,
    `delete table ip ${REFUSAL_TABLE}`,
    `table ip ${REFUSAL_TABLE} {`,
    '  chain forward {',
    '    type filter hook forward priority 0; policy accept;',
    ...refuse,
    '  }',
    '  chain output {',
    '    type filter hook output priority 0; policy accept;',
    ...refuse,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** The script that removes the table (nothing when there is none). */
export function removeRefusal(): string {
  return `table ip ${REFUSAL_TABLE} {}\ndelete table ip ${REFUSAL_TABLE}\n`;
}

/**
 * Drops every nftables table whose name starts with the local network's prefix: what a run
 * killed before its stop left (one cluster runs on a machine at a time, so none is another's).
 */
export async function removeTables(log: Log): Promise<void> {
  await ensureNft(log);
  const tables = (await nftTables()).filter((t) => t.name.startsWith(TABLE_PREFIX));
  if (tables.length === 0) return;
  await nft(tables.map((t) => `delete table ${t.family} ${t.name}`).join('\n') + '\n').catch((err: unknown) =>
    log(`removing leftover tables: ${String(err)}`),
  );
  log(`removed ${tables.length} tables a run before left`);
}
