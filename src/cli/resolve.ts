/* What the CLI accepts for a flow (a processId or a name) and an execution (an id or a unique prefix of one). */
import type { WfxClient } from '../client/client.js';
import { WfxError } from '../shared/errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The processId of `arg`: a processId (a UUID) as it is, else the flow named so (exactly; else
 * in any case) among those the caller sees. Throws PROCESS_NOT_FOUND when none is, USAGE_ERROR
 * listing them when several are.
 */
export async function processIdOf(client: WfxClient, arg: string): Promise<string> {
  if (UUID.test(arg)) return arg;
  const flows = (await client.flows.list()).items;
  let named = flows.filter((f) => f.name === arg);
  if (named.length === 0) named = flows.filter((f) => f.name.toLowerCase() === arg.toLowerCase());
  if (named.length === 1) return named[0]!.processId;
  if (named.length === 0)
    throw new WfxError('PROCESS_NOT_FOUND', `no flow ${arg}: give a processId, a flow's name or a flow file`);
  throw new WfxError(
    'USAGE_ERROR',
    `${named.length} flows are named ${arg}: give one's processId (${named.map((f) => f.processId).join(', ')})`,
  );
}

// The TUI resolves prefixes too (`:open`): the resolver lives with the client.
export { executionIdOf, prefixTimeRange, treeRoot, type PickExecution } from '../client/execution-id.js';
