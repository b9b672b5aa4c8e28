import { InvalidArgumentError, Option, type Command } from 'commander';
import { STATE_NAMES } from '../../client/describe.js';
import {
  EXECUTION_STATES,
  WAITING_FOR,
  type BulkQuery,
  type Environment,
  type WaitingFor,
} from '../../shared/api/index.js';
import { parseWhere } from '../../shared/flow/search-attributes.js';
import { givenOnly } from '../options.js';

/** The selection flags of a command over a query of executions, as commander parses them. */
export interface SelectionOptions {
  readonly flow?: string;
  readonly version?: string;
  readonly state?: (typeof STATE_NAMES)[number];
  readonly env?: Environment;
  readonly errorCode?: string;
  readonly failedNode?: string;
  readonly correlationKey?: string;
  readonly waiting?: WaitingFor | 'any';
  /** Search attributes, each `name=value` (repeatable). */
  readonly where?: readonly string[];
  readonly startedAfter?: string;
  readonly startedBefore?: string;
  readonly org?: string;
  readonly all?: boolean;
  readonly root?: string;
}

/** A `--started-after`/`--started-before` value: an ISO date or date-time, as an ISO date-time. */
export function parseInstant(value: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms))
    throw new InvalidArgumentError('must be an ISO date or date-time, e.g. 2026-11-20 or 2026-11-20T08:00:00Z');
  return new Date(ms).toISOString();
}

/**
 * Adds the filters `instances list` takes as the selection flags do: state, environment, failure
 * code, failed node (its value named `nodeValue` in the help), correlation key and what a running
 * one waits for, in that order.
 */
export function addExecutionFilters(command: Command, nodeValue = '<node>'): Command {
  return command
    .addOption(new Option('--state <state>', 'only executions in this state').choices([...STATE_NAMES]))
    .addOption(
      new Option('--env <environment>', 'only executions in this environment').choices(['DEVELOPMENT', 'PRODUCTION']),
    )
    .option('--error-code <code>', 'only failed executions with this failure code')
    .option(`--failed-node ${nodeValue}`, 'only failed executions that failed at this node')
    .option('--correlation-key <key>', 'only executions with this correlation key')
    .addOption(
      new Option(
        '--waiting <for>',
        'only running executions waiting for this at some node (person: an input node or user task; any: anything)',
      ).choices([...WAITING_FOR, 'any']),
    )
    .option(
      '--where <name=value>',
      "only executions with this search attribute (a flow's search:); repeat for more, all must hold",
      parseWhereOption,
    );
}

/** A `--where` value checked, added to those before it. */
function parseWhereOption(value: string, before: readonly string[] | undefined): string[] {
  const pair = parseWhere(value);
  if ('error' in pair) throw new InvalidArgumentError(`${pair.error}; e.g. --where orderId=A-1002`);
  return [...(before ?? []), `${pair.name}=${pair.value}`];
}

/**
 * Adds the selection flags (GET /process/instances' filters: flow, version, state, environment,
 * failure code, failed node, correlation key, started between, organization, children, tree) to `command`.
 */
export function addSelectionOptions(command: Command): Command {
  return addExecutionFilters(
    command
      .option('--flow <processId>', 'only executions of this flow')
      .option('--version <n>', 'only executions of this flow version'),
  )
    .option('--started-after <instant>', 'only executions started at or after this instant (ISO)', parseInstant)
    .option('--started-before <instant>', 'only executions started before this instant (ISO)', parseInstant)
    .option('--org <organization>', "system keys: only this organization's executions (default: every one's)")
    .option('--all', "child executions too (loop iterations, subprocesses, agents' tools); default: top-level only")
    .option('--root <id>', 'only the tree of this top-level execution: it and everything started under it');
}

/** Whether any selection flag is given. Pure. */
export function hasSelection(opts: SelectionOptions): boolean {
  return (
    [
      opts.flow,
      opts.version,
      opts.state,
      opts.env,
      opts.errorCode,
      opts.failedNode,
      opts.correlationKey,
      opts.waiting,
      opts.where,
      opts.startedAfter,
      opts.startedBefore,
      opts.org,
      opts.root,
    ].some((v) => v !== undefined) || opts.all === true
  );
}

/** The selection flags as the wire's query (BulkQuery). Pure. */
export function queryOf(opts: SelectionOptions): BulkQuery {
  return {
    ...givenOnly({
      processId: opts.flow,
      version: opts.version,
      state: opts.state === undefined ? undefined : EXECUTION_STATES[STATE_NAMES.indexOf(opts.state)],
      environment: opts.env,
      errorCode: opts.errorCode,
      failedNode: opts.failedNode,
      correlationKey: opts.correlationKey,
      waiting: opts.waiting,
      startedAfter: opts.startedAfter,
      startedBefore: opts.startedBefore,
      organization: opts.org,
    }),
    ...(opts.where !== undefined && { where: [...opts.where] }),
    ...(opts.all === true && { children: true }),
    ...(opts.root !== undefined && { rootId: opts.root }),
  };
}

/** The query as a person reads it in a confirmation (`flow=…, state=RUNNING`), or `every execution`. Pure. */
export function describeQuery(query: BulkQuery): string {
  const parts = Object.entries(query).map(([k, v]) => `${k}=${String(v)}`);
  return parts.length === 0 ? 'every execution' : parts.join(', ');
}
