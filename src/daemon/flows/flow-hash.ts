import { createHash } from 'node:crypto';
import type { FlowDefinition } from '../../shared/flow/types.js';

/** JSON with object keys sorted: the same definition always gives the same text. Pure. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The hash a published version is known by (sha256 of its canonical JSON, hex): an identical
 * definition published again gives back its version. Pure; it recurses as deep as the
 * definition nests (a validated flow nests within FLOW_LIMITS.depth).
 */
export function flowHash(definition: FlowDefinition): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}
