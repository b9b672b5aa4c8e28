import { WfxError } from './errors.js';

/** Parses `text` as a JSON object (pure). Throws USAGE_ERROR naming `what` when it is not JSON, or not an object. */
export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new WfxError('USAGE_ERROR', `${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new WfxError('USAGE_ERROR', `${what} must be a JSON object, not ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : `a ${typeof parsed}`}`);
  }
  return parsed as Record<string, unknown>;
}
