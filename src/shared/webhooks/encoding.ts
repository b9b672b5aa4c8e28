/**
 * Strict decoding of a presented signature: only the exact text an encoder writes for a digest
 * of the expected length decodes. `Buffer.from(text, 'hex' | 'base64')` stops at the first
 * character it cannot read and ignores the rest, so a valid signature followed by anything
 * would decode to the valid bytes; these refuse it (and every other spelling of the bytes).
 */

/** Which letters a hex signature may use: lower case only, or one case throughout (not mixed). */
export type HexCase = 'lower' | 'either';

const LOWER_HEX = /^[0-9a-f]*$/;
const EITHER_HEX = /^(?:[0-9a-f]*|[0-9A-F]*)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The `bytes` bytes `text` spells in hex: exactly `2 * bytes` hex digits, in lower case (or with
 * `hexCase` 'either', all upper case too). Null for anything else: another length, a sign,
 * whitespace, a mix of cases.
 */
export function decodeHex(text: string, bytes: number, hexCase: HexCase = 'lower'): Buffer | null {
  if (text.length !== bytes * 2) return null;
  if (!(hexCase === 'lower' ? LOWER_HEX : EITHER_HEX).test(text)) return null;
  return Buffer.from(text, 'hex');
}

/**
 * The `bytes` bytes `text` spells in canonical base64 (RFC 4648 section 4: the standard
 * alphabet, padded with `=`, unused bits zero): the one text an encoder writes for them. Null
 * for anything else: no padding, base64url letters, whitespace, extra characters, non-zero
 * unused bits.
 */
export function decodeBase64(text: string, bytes: number): Buffer | null {
  if (text.length !== Math.ceil(bytes / 3) * 4 || !BASE64.test(text)) return null;
  const decoded = Buffer.from(text, 'base64');
  // Re-encoding gives the canonical text: any other spelling of the same bytes differs from it.
  return decoded.length === bytes && decoded.toString('base64') === text ? decoded : null;
}
