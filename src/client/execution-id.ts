/* An execution named by its id or a unique prefix of one (as git takes commits): the CLI and the TUI's `:open`. */
import type { WfxClient } from './client.js';
import type { InstanceSummary } from '../shared/api/index.js';
import { WfxError } from '../shared/errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A prefix of a UUID's text: hex digits, dashes where a UUID has them (checked by matching). */
const PREFIX = /^[0-9a-f][0-9a-f-]*$/i;
/** The fewest hex digits taken as a prefix (as git): shorter ones are passed on as they are. */
const MIN_PREFIX = 4;
/** The latest instant an ISO date-time (and the API's startedBefore) can name. */
const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');
/** Candidates an ambiguous prefix lists, and the pages read to find them (bounded). */
const CANDIDATES = 10;
const MAX_PAGES = 20;

/**
 * The [from, to) milliseconds of the executions whose ids begin with `hex` (digits only): ids
 * are UUIDv7, the start's 48-bit millisecond first, so a prefix is a time range. Pure.
 */
export function prefixTimeRange(hex: string): { from: number; to: number } {
  const head = hex.slice(0, 12);
  return {
    from: Number.parseInt(head.padEnd(12, '0'), 16),
    to: Math.min(Number.parseInt(head.padEnd(12, 'f'), 16) + 1, MAX_MS),
  };
}

/**
 * Of several executions a prefix begins, the top-level one when the others are its children (a
 * loop's first iteration starts in the same millisecond as its parent); else null. Pure.
 */
export function treeRoot(found: readonly InstanceSummary[]): string | null {
  const tops = found.filter((i) => i.parentInstanceId === null);
  if (tops.length !== 1) return null;
  const top = tops[0]!.processInstanceId;
  return found.every((i) => i === tops[0] || i.parentInstanceId === top) ? top : null;
}

/** How a command picks among several executions a prefix begins: the one it means, or null (ambiguous). */
export type PickExecution = (found: readonly InstanceSummary[]) => Promise<string | null> | string | null;

/**
 * The execution id `arg` names: a whole id (or anything not a prefix of one) as it is, else the
 * one execution the caller sees whose id begins with it (child executions too; of several, the
 * one `pick` picks, by default a tree's root: treeRoot). Reads only the executions started
 * within the prefix's time range. Throws INSTANCE_NOT_FOUND when none does, AMBIGUOUS_ID
 * listing candidates (newest first) when several do.
 */
export async function executionIdOf(client: WfxClient, arg: string, pick: PickExecution = treeRoot): Promise<string> {
  const hex = arg.replace(/-/g, '');
  if (UUID.test(arg) || !PREFIX.test(arg) || hex.length < MIN_PREFIX || arg.length >= 36) return arg;
  const prefix = arg.toLowerCase();
  const { from, to } = prefixTimeRange(hex.toLowerCase());
  if (from >= to) throw new WfxError('INSTANCE_NOT_FOUND', `no execution id begins with ${arg}`);
  const found: InstanceSummary[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES && found.length < CANDIDATES; page++) {
    const res = await client.instances.search({
      startedAfter: new Date(from).toISOString(),
      startedBefore: new Date(to).toISOString(),
      children: true,
      limit: 200,
      ...(cursor !== undefined && { cursor }),
    });
    found.push(...res.items.filter((i) => i.processInstanceId.startsWith(prefix)));
    if (res.nextCursor === null || res.nextCursor === undefined) break;
    cursor = res.nextCursor;
  }
  if (found.length === 1) return found[0]!.processInstanceId;
  if (found.length === 0) throw new WfxError('INSTANCE_NOT_FOUND', `no execution id begins with ${arg}`);
  const one = found.length < CANDIDATES ? await pick(found) : null;
  if (one !== null) return one;
  const listed = found
    .slice(0, CANDIDATES)
    .map((i) => `\n  ${i.processInstanceId}  ${i.processName} v${i.processVersion}  ${i.state}  ${i.startTime}`);
  throw new WfxError(
    'AMBIGUOUS_ID',
    `${arg} begins ${found.length >= CANDIDATES ? `${CANDIDATES} or more` : found.length} execution ids:${listed.join('')}`,
    { details: { candidates: found.slice(0, CANDIDATES).map((i) => i.processInstanceId) } },
  );
}
