/**
 * The checks every request that brings variables passes before they are copied (a start, a
 * retry's data, a replay's): its nesting, then the JSON size it makes. One place, so the limits
 * and their answers stay the same whichever request carries the data.
 */
import { formatBytes } from '../../../shared/bytes.js';
import { WfxError } from '../../../shared/errors.js';
import { describeDepthExcess, formatJsonPath, jsonDepthExcess } from '../../../shared/json-shape.js';

/**
 * Throws VALIDATION_ERROR (with the path and the most depth) when `data` nests deeper than
 * `maxDepth`. `what` names the data in the message ("the start data"). Safe on any depth: it
 * stops at the first excess, before anything recurses over the data.
 */
export function checkDataDepth(data: unknown, maxDepth: number, what: string): void {
  const excess = jsonDepthExcess(data, maxDepth);
  if (excess === null) return;
  throw new WfxError('VALIDATION_ERROR', `${what} is ${describeDepthExcess(excess, 'data')}`, {
    details: { path: formatJsonPath(excess.path, 'data'), maxDepth: excess.maxDepth },
  });
}

/**
 * Throws PAYLOAD_TOO_LARGE when `bytes` of JSON pass the variables-size `limit`. `what` says what
 * would be over ("the start data is", "the variables would be").
 */
export function checkVariablesBytes(bytes: number, limit: number, what: string): void {
  if (bytes <= limit) return;
  throw new WfxError(
    'PAYLOAD_TOO_LARGE',
    `${what} over ${formatBytes(limit)} of JSON (the daemon's variables-size limit)`,
    { details: { limit } },
  );
}
