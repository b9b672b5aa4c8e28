/**
 * The one constant-time comparison of secrets (MACs, key hashes, signatures): every place that
 * compares something an attacker presents with something secret uses it.
 */
import { timingSafeEqual } from 'node:crypto';

/**
 * Whether `a` and `b` hold the same bytes, in a time that does not depend on where they differ.
 * Different lengths answer false at once: use it where the length is no secret (a digest, a MAC,
 * a fixed-size key). Pure; never throws.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
