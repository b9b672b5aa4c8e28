import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { isWfxError, WfxError } from '../../shared/errors.js';
import { progressOf, type WfxClient } from '../../client/client.js';
import { STATE_NAMES } from '../../client/describe.js';
import type { InstanceView } from '../../shared/api/index.js';
import { clientFor, collect, dataOf } from '../api.js';
import { globals, printJson, useColor, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { processIdOf } from '../resolve.js';
import { AnswerStream } from '../answer-stream.js';
import { formatLogLine, type LogEntry } from '../format.js';
import { Spinner } from '../spinner.js';
import { reportRefusedFlow } from '../flow-refusal.js';

interface RunOptions {
  data?: string;
  set?: string[];
  env?: 'DEVELOPMENT' | 'PRODUCTION';
  version?: string;
  correlationKey?: string;
  wait?: boolean;
  follow?: boolean;
  timeout?: number;
  priority?: number;
}

/** A `--priority` value: an integer from -1000 to 1000. */
const priorityOf = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < -1000 || n > 1000)
    throw new InvalidArgumentError('must be an integer from -1000 to 1000');
  return n;
};

/** A `--timeout` value: a positive number of seconds. */
export const positive = (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
};

/** The exit code of a finished execution (SPEC.md section 8). */
export function exitCodeOfState(stateCd: number): number {
  return stateCd === 1 ? EXIT.OK : stateCd === 2 ? EXIT.FAILED : stateCd === 3 ? EXIT.CANCELLED : EXIT.OK;
}

/** `wfx run`: start an execution, optionally wait for it or follow its log. */
export function registerRun(program: Command, ctx: CliContext): void {
  program
    .command('run')
    .description('start an execution of a published flow, or of a flow file (published to DEVELOPMENT first)')
    .argument('<flow>', "a processId, a flow's name (where unique), or a flow file")
    .option('--data <json>', 'input variables: a JSON object, or @file')
    .option('--set <key=value>', 'one input variable (typed; dotted keys nest); repeatable', collect, [])
    .addOption(
      new Option('--env <environment>', 'environment to run in (default PRODUCTION; DEVELOPMENT for a file)').choices([
        'DEVELOPMENT',
        'PRODUCTION',
      ]),
    )
    .option('--version <n>', 'run this version instead of the active one')
    .option('--correlation-key <key>', 'your reference; catch events correlate on it')
    .option('--wait', 'wait until it finishes: exit 0 completed, 1 failed, 3 cancelled')
    .option('--follow', 'print its log as it runs (implies --wait)')
    .option('--timeout <seconds>', 'wait (implies --wait) and exit 4 if not finished by then', positive)
    .option('--priority <n>', 'higher starts first where starts wait their turn (a concurrency limit)', priorityOf)
    .addHelpText(
      'after',
      `
Examples:
  $ wfx run 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --set order.id=42 --set order.total=250
  $ wfx run flows/order-approval.yaml --data @order.json --follow
  $ wfx run 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --wait --timeout 60 --json`,
    )
    .action(async (flow: string, opts: RunOptions, cmd: Command) => {
      const g = globals(cmd);
      const client = await clientFor(ctx, cmd);
      const data = await dataOf(ctx, opts);
      let processId = flow;
      let environment = opts.env;
      const file = resolve(ctx.cwd, flow);
      if (/\.(ya?ml|json)$/i.test(flow) || (existsSync(file) && !/^[0-9a-f-]{36}$/i.test(flow))) {
        if (!existsSync(file)) throw new WfxError('USAGE_ERROR', `no flow file ${flow}`);
        environment ??= 'DEVELOPMENT';
        const source = await readFile(file, 'utf8');
        const published = await client.flows.publish({ source, environment }).catch((err: unknown) => {
          if (!isWfxError(err, 'FLOW_INVALID')) throw err;
          return reportRefusedFlow(ctx, flow, err, g.json === true);
        });
        if (!published) return;
        processId = published.processId;
        if (!g.json)
          ctx.stderr.write(
            `published ${flow} to ${environment} as version ${published.version}${published.created ? '' : ' (unchanged)'}\n`,
          );
      } else if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(flow)) {
        processId = await processIdOf(client, flow);
      }
      const started = await client.process.start({
        processId,
        data,
        environment,
        version: opts.version,
        correlationKey: opts.correlationKey,
        ...(opts.priority !== undefined && { priority: opts.priority }),
      });
      const id = started.processInstanceId;
      // A deadline only means something to a command that waits: --timeout alone waits too.
      // The id alone on stdout (scripts take it from there); where the console shows it on stderr.
      const consoleLine = `console: ${client.instances.consoleUrl(id)}\n`;
      if (!opts.wait && !opts.follow && opts.timeout === undefined) {
        if (g.json) printJson(ctx, { ...started, processId });
        else {
          ctx.stdout.write(`${id}\n`);
          if (started.status === 'queued')
            ctx.stderr.write("queued: the flow's concurrency limit is reached; it starts when a slot frees\n");
          ctx.stderr.write(consoleLine);
        }
        return;
      }
      const queued = started.status === 'queued' ? " (queued: the flow's concurrency limit is reached)" : '';
      if (!g.json) ctx.stderr.write(`started ${id}${queued}\n${consoleLine}`);
      // Not `?wait=`: that answer would carry the id only at the end, and a person waiting needs it
      // now (to answer a task elsewhere). The log stream says when it ends, without polling.
      await waitAndReport(ctx, cmd, client, id, opts);
    });
}

/**
 * Waits for execution `id` to finish (`--follow`: printing its log; `--timeout`: at most so
 * long), then prints it as `wfx run --wait` does and sets the exit code by its state (4 on a
 * timeout). A spinner shows the time waited on a terminal when there is no log to show.
 */
export async function waitAndReport(
  ctx: CliContext,
  cmd: Command,
  client: WfxClient,
  id: string,
  opts: { readonly follow?: boolean; readonly timeout?: number },
): Promise<void> {
  const g = globals(cmd);
  const spinner =
    !opts.follow && Spinner.allowed(ctx, g.json === true)
      ? new Spinner(ctx.stderr, `running ${id}`, useColor(ctx, g, ctx.stderr))
      : undefined;
  const finished = await waitFor(ctx, client, id, {
    follow: opts.follow === true,
    json: g.json === true,
    timeoutS: opts.timeout,
    color: useColor(ctx, g),
    spinner,
  });
  if (!finished) {
    if (g.json) printJson(ctx, { processInstanceId: id, timedOut: true });
    ctx.stderr.write(
      `TIMEOUT: ${id} did not finish within ${opts.timeout} s; it goes on running (wfx instances get ${id})\n`,
    );
    ctx.exitCode = EXIT.TIMEOUT;
    return;
  }
  reportFinished(ctx, finished, { json: g.json === true, follow: opts.follow === true });
  ctx.exitCode = exitCodeOfState(finished.stateCd);
}

/**
 * Prints a finished execution as `wfx run --wait` and `--follow` (and `wfx logs --follow`) end:
 * `<id> <state>`, its error on stderr, `output: {...}`; with --json the execution, as one line
 * closing a followed stream of log lines.
 */
export function reportFinished(
  ctx: CliContext,
  finished: InstanceView,
  opts: { readonly json: boolean; readonly follow: boolean },
): void {
  if (opts.json && opts.follow) ctx.stdout.write(`${JSON.stringify(finished)}\n`);
  else if (opts.json) printJson(ctx, finished);
  else {
    const state = STATE_NAMES[finished.stateCd] ?? String(finished.stateCd);
    ctx.stdout.write(`${finished.processInstanceId} ${state}\n`);
    const e = finished.data.error;
    if (e) ctx.stderr.write(`${e.code}: ${e.message}${e.nodeId ? ` (node ${e.nodeId})` : ''}\n`);
    if (finished.output) ctx.stdout.write(`output: ${JSON.stringify(finished.output)}\n`);
  }
}

/**
 * Waits for execution `id` to finish by reading its log stream to `event: end` (reconnecting
 * with Last-Event-ID if the connection drops); prints the entries when following, and models'
 * answers as they stream in (AnswerStream). Resolves with the finished execution, or null when
 * `timeoutS` passed first. A `spinner` spins meanwhile and is erased before any output and at the end.
 */
export async function waitFor(
  ctx: CliContext,
  client: WfxClient,
  id: string,
  opts: { follow: boolean; json: boolean; timeoutS?: number; color: boolean; spinner?: Spinner },
): Promise<InstanceView | null> {
  const abort = new AbortController();
  const timer = opts.timeoutS === undefined ? null : setTimeout(() => abort.abort(), opts.timeoutS * 1000);
  const spinner = opts.spinner?.start();
  let lastId: string | undefined;
  const answers = new AnswerStream(ctx.stdout, AnswerStream.modeFor(ctx, opts.json), opts.color);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        for await (const ev of client.instances.streamLogs(id, {
          lastEventId: lastId,
          signal: abort.signal,
          progress: opts.follow,
        })) {
          if (ev.event === 'end') {
            answers.close();
            return await client.instances.get(id);
          }
          const progress = progressOf(ev);
          if (progress) {
            spinner?.clear();
            answers.progress(progress);
            continue;
          }
          if (ev.id !== undefined) lastId = ev.id;
          if (opts.follow && ev.data !== undefined) {
            const entry = JSON.parse(ev.data) as LogEntry;
            spinner?.clear();
            answers.beforeEntry(entry.nodeId);
            ctx.stdout.write(
              opts.json
                ? `${JSON.stringify({ id: Number(ev.id), ...entry })}\n`
                : `${formatLogLine(entry, opts.color)}\n`,
            );
          }
        }
        // The stream closed without `end` (daemon restarting): reconnect where we were.
        answers.close();
      } catch (err) {
        if (abort.signal.aborted) return null;
        if (!(err instanceof WfxError && err.code === 'DAEMON_UNREACHABLE') || attempt > 30) throw err;
      }
      if (abort.signal.aborted) return null;
      await new Promise((r) => setTimeout(r, Math.min(5000, 200 * 2 ** Math.min(attempt, 5))));
    }
  } finally {
    if (timer) clearTimeout(timer);
    spinner?.stop();
  }
}
