/**
 * The bridge all Pods of this machine hang on, and the rules that keep their traffic here:
 * nothing is forwarded between the bridge and another interface, a ClusterIP nobody serves is
 * refused instead of routed out, and DNATed traffic leaving through the bridge is masqueraded
 * (so a Pod reaching itself through a Service, hairpin, gets its replies back).
 * The network part owns the bridge (its pid is the bridge's alias); a node only makes sure it exists.
 */
import type { Log } from '../types.ts';
import { interfaceSysctl, ip, ipBatch, links, netnsNames } from './ip.ts';
import { ensureNft, nft, nftTables } from './nft.ts';
import { BRIDGE, GATEWAY, NAME_PREFIX, POD_CIDR, SERVICE_CIDR, TABLE_PREFIX, VETH_PREFIX } from './podNetwork.ts';

/** The table of the bridge's own rules. */
export const BRIDGE_TABLE = `${TABLE_PREFIX}bridge`;
const OWNER = 'etcd-operator-network:';

/** The base ruleset of the bridge, as an `nft -f` script that replaces it. */
export function bridgeRules(): string {
  const br = JSON.stringify(BRIDGE);
  return `table ip ${BRIDGE_TABLE} {}
delete table ip ${BRIDGE_TABLE}
table ip ${BRIDGE_TABLE} {
  chain forward {
    type filter hook forward priority 0; policy accept;
    ip daddr ${SERVICE_CIDR} meta l4proto tcp reject with tcp reset
    ip daddr ${SERVICE_CIDR} reject
    iifname ${br} oifname != ${br} drop
    oifname ${br} iifname != ${br} drop
  }
  chain output {
    type filter hook output priority 0; policy accept;
    ip daddr ${SERVICE_CIDR} meta l4proto tcp reject with tcp reset
    ip daddr ${SERVICE_CIDR} reject
  }
  chain input {
    type filter hook input priority 0; policy accept;
    iifname ${br} ip daddr 127.0.0.0/8 ct status & dnat == 0 drop
  }
  chain postrouting {
    type nat hook postrouting priority 100; policy accept;
    oifname ${br} ct status dnat masquerade
  }
}
`;
}

async function exists(): Promise<{ alias: string } | undefined> {
  return (await links()).find((l) => l.name === BRIDGE);
}

function ownerAlive(alias: string): boolean {
  if (!alias.startsWith(OWNER)) return false;
  const pid = Number(alias.slice(OWNER.length));
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes the bridge, its address and rules exist (a no-op when they do). Packets arriving on it
 * may be forwarded (to Pods, after a Service's DNAT) and may be DNATed to the host's loopback
 * (the API server): route_localnet, with the input rule above guarding loopback.
 */
export async function ensureBridge(log: Log): Promise<void> {
  await ensureNft(log);
  if (!(await exists())) {
    await ip(['link', 'add', BRIDGE, 'type', 'bridge']).catch(async (err: unknown) => {
      if (!(await exists())) throw err; // made by another process meanwhile: fine
    });
    log(`made the bridge ${BRIDGE} (${GATEWAY}, Pods in ${POD_CIDR})`);
  }
  const addrs = await ip(['-4', '-o', 'addr', 'show', 'dev', BRIDGE]);
  if (!addrs.includes(`${GATEWAY}/`)) await ip(['addr', 'add', `${GATEWAY}/16`, 'dev', BRIDGE]).catch(() => undefined);
  await ip(['link', 'set', BRIDGE, 'up']);
  await interfaceSysctl(BRIDGE, 'forwarding', '1');
  await interfaceSysctl(BRIDGE, 'route_localnet', '1');
  await nft(bridgeRules());
}

/**
 * Takes the bridge for this process: when another live network owns it, only makes sure it
 * exists (false); else removes what a killed run left (Pod namespaces, veths, tables) and owns it.
 */
export async function claimBridge(log: Log): Promise<boolean> {
  const found = await exists();
  if (found && ownerAlive(found.alias)) {
    await ensureBridge(log);
    return false;
  }
  await removePodNetwork(log);
  await ensureBridge(log);
  await ip(['link', 'set', 'dev', BRIDGE, 'alias', `${OWNER}${process.pid}`]);
  return true;
}

/** Removes every Pod namespace, veth, nftables table of the local network, and the bridge. */
export async function removePodNetwork(log: Log): Promise<void> {
  const names = (await netnsNames()).filter((n) => n.startsWith(NAME_PREFIX));
  const veths = (await links()).filter((l) => l.kind === 'veth' && l.name.startsWith(VETH_PREFIX));
  const commands = [
    ...veths.map((l) => `link del ${l.name}`),
    ...names.map((n) => `netns del ${n}`),
    ...((await exists()) ? [`link del ${BRIDGE}`] : []),
  ];
  if (commands.length > 0) {
    await ipBatch(commands).catch((err: unknown) => log(`removing the Pod network: ${String(err)}`));
    log(`removed ${names.length} Pod network namespaces, ${veths.length} veths and the bridge`);
  }
  await removeTables(log);
}

/** Drops every nftables table whose name starts with the local network's prefix. */
export async function removeTables(log: Log): Promise<void> {
  const tables = (await nftTables()).filter((t) => t.name.startsWith(TABLE_PREFIX));
  if (tables.length === 0) return;
  await nft(tables.map((t) => `delete table ${t.family} ${t.name}`).join('\n') + '\n').catch((err: unknown) =>
    log(`removing leftover tables: ${String(err)}`),
  );
}
