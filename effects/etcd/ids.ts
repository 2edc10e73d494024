import { ERR } from '../../machines/error-codes.ts';
/**
 * The one form of etcd IDs (members and clusters) the operator uses: lowercase hexadecimal
 * without leading zeros, as etcdctl prints them (`%x`). etcd3 hands IDs over as decimal
 * strings (uint64 does not fit a number), so every ID crosses this file on its way in or out.
 */
import { EffectError } from '../types.ts';

/** An ID as etcd3 returns it (decimal string), in the canonical form: `%x`, e.g. `8e9e05c52164694d`. */
export function hexID(decimal: string): string {
  return BigInt(decimal).toString(16);
}

/** A canonical (hex) ID as etcd3 expects it in a request: a decimal string. */
export function decimalID(hex: string): string {
  return BigInt(`0x${checked(hex)}`).toString(10);
}

/** A hex ID from a parameter, in the canonical form (lowercase, no leading zeros). */
export function canonicalID(hex: string): string {
  return BigInt(`0x${checked(hex)}`).toString(16);
}

/** An intent with a malformed ID is a bug upstream: retrying cannot fix it. */
function checked(hex: string): string {
  if (!/^0*[0-9a-fA-F]{1,16}$/.test(hex))
    throw new EffectError(ERR.INVALID_MEMBER_ID, `not a hexadecimal etcd ID: ${JSON.stringify(hex)}`, {
      retryable: false,
    });
  return hex;
}
