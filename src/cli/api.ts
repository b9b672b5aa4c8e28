import type { Command } from 'commander';
import { WfxError } from '../shared/errors.js';
import { ApiClient } from './client.js';
import { parseJsonObject } from '../shared/json-object.js';
import { globals, readUserFile, type CliContext } from './context.js';
import { resolveConnection } from './credentials.js';

/** The API client for a command: URL and credential resolved from flags, env, login, data dir. */
export async function clientFor(ctx: CliContext, cmd: Command): Promise<ApiClient> {
  return new ApiClient(await resolveConnection(ctx, globals(cmd)));
}

/** Whether the credential is a system key (it starts with /process/start). */
export async function isSystem(client: ApiClient): Promise<boolean> {
  const me = await client.get<{ system: boolean }>('/auth/whoami');
  return me.system;
}

/** What starting an execution takes: the flow, its input variables, and optionally where and which version. */
export interface StartRequest {
  readonly processId: string;
  readonly data: Record<string, unknown>;
  /** The environment to run in (the daemon's default: PRODUCTION). */
  readonly environment?: string;
  /** Run this version instead of the environment's active one. */
  readonly version?: string;
  readonly correlationKey?: string;
}

/** What POST /process/start and /process/exec answer. */
export interface Started {
  readonly processInstanceId: string;
  readonly processId: string;
  readonly status: string;
  readonly startTime: string;
}

/**
 * Starts an execution the way this credential must: system keys through POST /process/start,
 * organization keys through POST /process/exec (asked of GET /auth/whoami). Throws the API's
 * WfxError (PROCESS_NOT_FOUND, PROCESS_NOT_PUBLISHED, FORBIDDEN, ...).
 */
export async function startExecution(client: ApiClient, req: StartRequest): Promise<Started> {
  const query = new URLSearchParams({ ...(req.environment && { environment: req.environment }), ...(req.version && { versionNumber: req.version }) });
  const path = `${(await isSystem(client)) ? '/process/start' : '/process/exec'}${query.size ? `?${query}` : ''}`;
  return client.post<Started>(path, {
    processId: req.processId,
    data: req.data,
    ...(req.correlationKey !== undefined && { correlationKey: req.correlationKey }),
  });
}

/** A `--set key=value` value with its type: numbers, booleans and null typed; else a string. */
export function typedValue(text: string): unknown {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return Number(text);
  return text;
}

/** Merges `--set a.b=c` into `data` (dotted keys nest). Throws USAGE_ERROR on a malformed one. */
export function applySets(data: Record<string, unknown>, sets: readonly string[]): Record<string, unknown> {
  for (const set of sets) {
    const eq = set.indexOf('=');
    if (eq <= 0) throw new WfxError('USAGE_ERROR', `--set takes key=value, got ${set}`);
    const path = set.slice(0, eq).split('.');
    if (path.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype')) throw new WfxError('USAGE_ERROR', `--set key ${set.slice(0, eq)} is not valid`);
    let cur = data;
    for (const p of path.slice(0, -1)) {
      const next = cur[p];
      cur = (cur[p] = typeof next === 'object' && next !== null && !Array.isArray(next) ? next : {}) as Record<string, unknown>;
    }
    cur[path.at(-1)!] = typedValue(set.slice(eq + 1));
  }
  return data;
}

/** `--data` (JSON or @file) and `--set`s, merged. */
export async function dataOf(ctx: CliContext, opts: { data?: string; set?: string[] }): Promise<Record<string, unknown>> {
  const data = opts.data === undefined ? {} : await readJsonOption(ctx, opts.data, '--data');
  return applySets(data, opts.set ?? []);
}

/** Collects a repeatable option. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export const STATE_NAMES = ['running', 'completed', 'failed', 'cancelled'] as const;
export const STATUS_NAMES = ['active', 'waiting', 'completed', 'failed', 'cancelled', 'timed out'] as const;

/** A node instance as GET /process/instance/{id} gives it (the CLI and the TUI read it). */
export interface NodeView {
  readonly nodeInstanceId: string;
  readonly nodeId: string;
  readonly nodeName: string;
  readonly nodeType: string;
  readonly statusCd: number;
  readonly startTime: string;
  readonly endTime: string | null;
  readonly childInstanceIds?: readonly string[];
  readonly wait?: {
    readonly kind: string;
    readonly formTitle?: string | null;
    readonly inputType?: string;
    readonly eventType?: string;
    readonly messageRef?: string;
    readonly dueAt?: string | null;
    readonly state?: { readonly items: readonly unknown[] | null; readonly done: number; readonly running: number };
  };
}

/** What a waiting node waits for, in a few words; '' for a node that does not wait. */
export function waitingFor(n: NodeView): string {
  const w = n.wait;
  if (!w || n.statusCd !== 1) return '';
  const child = n.childInstanceIds?.at(-1);
  switch (w.kind) {
    case 'input':
      return `input ${w.inputType ?? ''}${w.formTitle ? `: ${w.formTitle}` : ''}`;
    case 'event':
      return `${w.eventType ?? 'message'} ${w.messageRef ?? ''}`;
    case 'timer':
      return `timer until ${w.dueAt ?? '?'}`;
    case 'child':
      return `child ${child ?? '?'}`;
    case 'loop':
      return `iterations ${w.state?.done ?? 0}${w.state?.items ? `/${w.state.items.length}` : ''} done, ${w.state?.running ?? 0} running${child ? ` (latest ${child})` : ''}`;
    default:
      return w.kind;
  }
}

/** Reads a JSON object option (`--data`, `--vars`): JSON text, or `@file`. Throws USAGE_ERROR. */
export async function readJsonOption(ctx: CliContext, value: string, what: string): Promise<Record<string, unknown>> {
  const text = value.startsWith('@') ? (await readUserFile(ctx, value.slice(1), `${what} file`)).toString('utf8') : value;
  return parseJsonObject(text, what);
}
