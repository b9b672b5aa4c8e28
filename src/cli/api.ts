import type { Command } from 'commander';
import { WfxError } from '../shared/errors.js';
import { WfxClient } from '../client/client.js';
import { parseJsonObject } from '../shared/json-object.js';
import { globals, readUserFile, type CliContext } from './context.js';
import { resolveConnection } from './credentials.js';

/** The API client for a command: URL and credential resolved from flags, env, login, data dir. */
export async function clientFor(ctx: CliContext, cmd: Command): Promise<WfxClient> {
  return new WfxClient(await resolveConnection(ctx, globals(cmd)));
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
    if (path.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype'))
      throw new WfxError('USAGE_ERROR', `--set key ${set.slice(0, eq)} is not valid`);
    let cur = data;
    for (const p of path.slice(0, -1)) {
      const next = cur[p];
      cur = (cur[p] = typeof next === 'object' && next !== null && !Array.isArray(next) ? next : {}) as Record<
        string,
        unknown
      >;
    }
    cur[path.at(-1)!] = typedValue(set.slice(eq + 1));
  }
  return data;
}

/** `--data` (JSON or @file) and `--set`s, merged. */
export async function dataOf(
  ctx: CliContext,
  opts: { data?: string; set?: string[] },
): Promise<Record<string, unknown>> {
  const data = opts.data === undefined ? {} : await readJsonOption(ctx, opts.data, '--data');
  return applySets(data, opts.set ?? []);
}

/** Collects a repeatable option. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Reads a JSON object option (`--data`, `--vars`): JSON text, or `@file`. Throws USAGE_ERROR. */
export async function readJsonOption(ctx: CliContext, value: string, what: string): Promise<Record<string, unknown>> {
  const text = value.startsWith('@')
    ? (await readUserFile(ctx, value.slice(1), `${what} file`)).toString('utf8')
    : value;
  return parseJsonObject(text, what);
}

/**
 * A secret read from standard input: its one line, the newline cut (never from argv, where `ps`
 * and shell history see it). Throws USAGE_ERROR `no <what> on standard input` when it is empty.
 */
export async function secretFromStdin(ctx: CliContext, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(chunk as Buffer);
  const secret = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (!secret) throw new WfxError('USAGE_ERROR', `no ${what} on standard input`);
  return secret;
}
