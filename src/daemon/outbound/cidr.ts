/**
 * CIDR rules of the network policy (network-policy.ts), parsed apart from it: the CLI checks
 * --http-deny/--http-allow with these without loading the policy's modules (dns, tls).
 */
import { BlockList, isIP } from 'node:net';
import { WfxError } from '../../shared/errors.js';

/** A CIDR rule as given, and its one-entry block list. */
export interface Rule {
  readonly text: string;
  readonly list: BlockList;
}

/**
 * Parses one CIDR (`10.0.0.0/8`, `fd00::/8`) or single address. Pure.
 * @throws WfxError USAGE_ERROR naming `what` when it is neither.
 */
export function parseCidr(text: string, what = 'a network rule'): Rule {
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const address = slash === -1 ? trimmed : trimmed.slice(0, slash);
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  const prefix =
    slash === -1 ? bits : /^\d{1,3}$/.test(trimmed.slice(slash + 1)) ? Number(trimmed.slice(slash + 1)) : NaN;
  if (family === 0 || !(prefix >= 0 && prefix <= bits)) {
    throw new WfxError(
      'USAGE_ERROR',
      `${what}: ${JSON.stringify(text)} is not an address or CIDR (e.g. 10.0.0.0/8, fd00::/8)`,
    );
  }
  const list = new BlockList();
  list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  return { text: slash === -1 ? `${trimmed}/${bits}` : trimmed, list };
}

/** A comma-separated list of CIDRs (a flag's or an environment variable's value), each checked by parseCidr. */
export function parseCidrList(text: string | undefined, what: string): string[] {
  if (text === undefined) return [];
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const item of items) parseCidr(item, what);
  return items;
}
