import { Option, type Command } from 'commander';
import type { Environment } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { processIdOf } from '../resolve.js';
import { table } from '../format.js';
import { WfxError } from '../../shared/errors.js';
import { flowSchema } from '../../shared/flow/schema.js';
import { inputFields } from '../../shared/flow/inputs.js';
import { duplicateProcessId, sharedProcessIds } from '../../shared/flow/duplicate-ids.js';
import { publishOrder } from '../../shared/flow/publish-order.js';
import { isFlowTestFile } from '../../shared/flow/files.js';
import type { FlowDefinition, Trigger } from '../../shared/flow/types.js';
import { formatProblem, validateFlowSource, type FlowProblem } from '../../shared/flow/validate.js';
import { globals, printJson, readUserFile, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { registerFlowNew } from './init.js';
import { checkWithDaemon, type ValidateResult } from './flow-daemon-check.js';

/** The trigger types a flow may declare (flows.md, Triggers): what `flow list --trigger` takes. */
const TRIGGER_TYPES = ['on-demand', 'webhook', 'schedule', 'email', 'execution'] satisfies ReadonlyArray<
  Trigger['type']
>;

/** `wfx flow validate|publish|list|show|schema`. */
export function registerFlow(program: Command, ctx: CliContext): void {
  const flow = program.command('flow').description('check and publish flow files');

  flow
    .command('validate')
    .description(
      "check flow files with the daemon's own validator; where a daemon answers, also what a publish checks against its state; exit 2 if any has a problem",
    )
    .argument('<files...>', 'flow files (YAML or JSON)')
    .addOption(
      new Option(
        '--env <environment>',
        'the environment a publish would activate it in (its agent tools are checked there)',
      )
        .choices(['DEVELOPMENT', 'PRODUCTION'])
        .default('PRODUCTION'),
    )
    .option('--offline', 'only the checks that need no daemon (no webhooks, connections, domains or tools)')
    .addHelpText('after', '\nExamples:\n  $ wfx flow validate flows/*.yaml\n  $ wfx flow validate order.yaml --json')
    .action(async (given: string[], opts: { env: Environment; offline?: boolean }, cmd: Command) => {
      const files = flowsOnly(ctx, given);
      const results: ValidateResult[] = [];
      const processIds = new Map<ValidateResult, string>();
      for (const file of files) {
        const source = (await readUserFile(ctx, file)).toString('utf8');
        const v = validateFlowSource(source);
        const r: ValidateResult = { file, ok: v.ok, problems: v.problems, source };
        if (v.ok) processIds.set(r, v.flow.processId);
        results.push(r);
      }
      // Files that share a processId: a publish of them would replace one with the other.
      for (const [r, twin] of sharedProcessIds(
        results,
        (r) => processIds.get(r) ?? null,
        (r) => r.file,
      )) {
        r.ok = false;
        r.problems = [...r.problems, duplicateProcessId(twin.processId, twin.others, r.source)];
      }
      const offline = opts.offline === true ? 'offline' : await checkWithDaemon(ctx, cmd, results, opts.env);
      const checked = offline === null ? 'daemon' : 'offline';
      if (globals(cmd).json)
        printJson(
          ctx,
          results.map(({ source: _, ...r }) => ({ ...r, checked })),
        );
      else {
        for (const r of results) {
          if (r.ok) ctx.stdout.write(`${r.file}: ok\n`);
          else {
            for (const p of r.problems) ctx.stderr.write(`${formatProblem(r.file, p)}\n`);
            if (r.error) ctx.stderr.write(`${r.file}: ${r.error}\n`);
          }
        }
        if (offline !== null && offline !== 'offline')
          ctx.stderr.write(
            `note: checked offline only (${offline}); a publish also checks webhooks, email connections, domains and agent tools against the daemon\n`,
          );
        const bad = results.filter((r) => !r.ok);
        if (bad.length > 0) {
          const count = bad.reduce((n, r) => n + Math.max(r.problems.length, r.error ? 1 : 0), 0);
          ctx.stderr.write(
            `FLOW_INVALID: ${count} problem${count === 1 ? '' : 's'} in ${bad.length} of ${results.length} file${results.length === 1 ? '' : 's'}\n`,
          );
        }
      }
      if (results.some((r) => !r.ok)) ctx.exitCode = EXIT.USAGE;
    });

  flow
    .command('publish')
    .description(
      'validate and publish flow files: a changed file is the next version, an unchanged one keeps its version',
    )
    .argument('<files...>', 'flow files (YAML or JSON)')
    .addOption(
      new Option('--env <environment>', 'the environment that runs it')
        .choices(['DEVELOPMENT', 'PRODUCTION'])
        .default('PRODUCTION'),
    )
    .option('--org <organization>', 'system keys: publish into this organization (default: default)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx flow publish flows/*.yaml\n  $ wfx flow publish order.yaml --env DEVELOPMENT --json',
    )
    .action(async (given: string[], opts: { env: Environment; org?: string }, cmd: Command) => {
      const files = flowsOnly(ctx, given);
      const client = await clientFor(ctx, cmd);
      const read: Array<{ file: string; source: string; flow: FlowDefinition | null }> = [];
      for (const file of files) {
        const source = (await readUserFile(ctx, file)).toString('utf8');
        const checked = validateFlowSource(source);
        read.push({ file, source, flow: checked.ok ? checked.flow : null });
      }
      const results: unknown[] = [];
      let failed = 0;
      // Files that share a processId would replace each other: each is refused, naming the others.
      const shared = sharedProcessIds(
        read,
        (r) => r.flow?.processId ?? null,
        (r) => r.file,
      );
      // An agent's tool flows first (its publish checks them); otherwise in the order given.
      for (const item of publishOrder(read, (r) => r.flow)) {
        const { file, source } = item;
        const twin = shared.get(item);
        if (twin) {
          failed++;
          const problem = duplicateProcessId(twin.processId, twin.others, source);
          results.push({ file, ok: false, problems: [problem] });
          if (!globals(cmd).json) ctx.stderr.write(`${formatProblem(file, problem)}\n`);
          continue;
        }
        try {
          const r = await client.flows.publish({
            source,
            environment: opts.env,
            ...(opts.org !== undefined && { organization: opts.org }),
          });
          results.push({ file, ok: true, ...r });
          if (!globals(cmd).json)
            ctx.stdout.write(
              `${file}: ${r.name} version ${r.version}${r.created ? '' : ' (unchanged)'} active in ${r.environment} (${r.processId})\n`,
            );
        } catch (err) {
          // A file the daemon refuses as a whole (over its body limit) is invalid input like a flow with problems.
          if (!(err instanceof WfxError) || (err.code !== 'FLOW_INVALID' && err.code !== 'PAYLOAD_TOO_LARGE'))
            throw err;
          failed++;
          const problems = ((err.details as { problems?: FlowProblem[] } | undefined)?.problems ?? []) as FlowProblem[];
          results.push({ file, ok: false, problems, ...(err.code !== 'FLOW_INVALID' && { error: err.code }) });
          if (!globals(cmd).json) {
            for (const p of problems) ctx.stderr.write(`${formatProblem(file, p)}\n`);
            if (err.code !== 'FLOW_INVALID') ctx.stderr.write(`${file}: ${err.code}: ${err.message}\n`);
          }
        }
      }
      if (globals(cmd).json) printJson(ctx, results);
      if (failed > 0) {
        if (!globals(cmd).json)
          ctx.stderr.write(
            `FLOW_INVALID: ${failed} of ${files.length} file${files.length === 1 ? '' : 's'} not published\n`,
          );
        ctx.exitCode = EXIT.USAGE;
      }
    });

  flow
    .command('list')
    .description('published flows with their versions, active versions and triggers')
    .addOption(
      new Option('--trigger <type>', 'only flows whose running version has a trigger of this type').choices(
        TRIGGER_TYPES,
      ),
    )
    .addHelpText(
      'after',
      `
The name and TRIGGERS are those of the version that runs: PRODUCTION's active version, else
DEVELOPMENT's, else the newest. \`on-demand\` marks a flow meant to be started by hand or API.

Examples:
  $ wfx flow list
  $ wfx flow list --trigger on-demand`,
    )
    .action(async (opts: { trigger?: string }, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).flows.list();
      const items = opts.trigger ? res.items.filter((f) => f.triggers.includes(opts.trigger!)) : res.items;
      if (globals(cmd).json) return printJson(ctx, items);
      ctx.stdout.write(
        table(
          ['PROCESS ID', 'NAME', 'VERSIONS', 'PRODUCTION', 'DEVELOPMENT', 'TRIGGERS'],
          items.map((f) => [
            f.processId,
            f.name,
            String(f.versions.length),
            f.active.PRODUCTION ?? '-',
            f.active.DEVELOPMENT ?? '-',
            f.triggers.length > 0 ? f.triggers.join(',') : '-',
          ]),
        ),
      );
    });

  flow
    .command('show')
    .alias('get')
    .description("a flow: its versions, its inputs, and one version's definition (default: the latest)")
    .addHelpText('after', '\nExample:\n  $ wfx flow show 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 --version 1')
    .argument('<flow>', 'its processId or its name')
    .option('--version <n>', 'this version')
    .action(async (processId: string, opts: { version?: string }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const res = await client.flows.get(await processIdOf(client, processId), opts.version || undefined);
      if (globals(cmd).json) return printJson(ctx, res);
      const { definition, ...rest } = res;
      const fields = inputFields(definition.inputs);
      const inputs =
        definition.inputs === undefined
          ? 'inputs: any object (the flow declares no inputs:)\n'
          : `inputs of version ${String(res.version)}:\n${
              fields.length === 0
                ? '  (none declared)\n'
                : table(
                    ['NAME', 'TYPE', 'REQUIRED', 'DEFAULT', 'DESCRIPTION'],
                    fields.map((f) => [
                      f.name,
                      f.enum ? f.enum.map((v) => JSON.stringify(v)).join('|') : f.type,
                      f.required ? 'yes' : 'no',
                      f.default === undefined ? '-' : JSON.stringify(f.default),
                      f.description ?? '',
                    ]),
                  )
            }`;
      ctx.stdout.write(
        `${JSON.stringify(rest, null, 2)}\n\n${inputs}\ndefinition of version ${String(res.version)}:\n${JSON.stringify(definition, null, 2)}\n`,
      );
    });

  flow
    .command('activate')
    .description('make a version the one an environment runs (rollback)')
    .addHelpText('after', '\nExample:\n  $ wfx flow activate 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11 1 --env PRODUCTION')
    .argument('<flow>', 'its processId or its name')
    .argument('<version>')
    .addOption(
      new Option('--env <environment>', 'the environment').choices(['DEVELOPMENT', 'PRODUCTION']).default('PRODUCTION'),
    )
    .action(async (processId: string, version: string, opts: { env: Environment }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      processId = await processIdOf(client, processId);
      const res = await client.flows.activate(processId, { version, environment: opts.env });
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`${processId}: version ${version} active in ${opts.env}\n`);
    });

  const env = (flag: string, what: string) =>
    new Option(`${flag} <environment>`, what).choices(['DEVELOPMENT', 'PRODUCTION']).makeOptionMandatory();
  flow
    .command('promote')
    .description('make the version one environment runs the one another runs (the same version, not a new one)')
    .addHelpText('after', '\nExample:\n  $ wfx flow promote order-approval --from DEVELOPMENT --to PRODUCTION')
    .argument('<flow>', 'its processId or its name')
    .addOption(env('--from', 'the environment whose active version is promoted'))
    .addOption(env('--to', 'the environment that runs it from now on'))
    .action(async (given: string, opts: { from: Environment; to: Environment }, cmd: Command) => {
      if (opts.from === opts.to) throw new WfxError('USAGE_ERROR', `--from and --to are both ${opts.from}`);
      const client = await clientFor(ctx, cmd);
      const processId = await processIdOf(client, given);
      const res = await client.flows.promote(processId, { from: opts.from, to: opts.to });
      if (globals(cmd).json) printJson(ctx, res);
      else
        ctx.stdout.write(
          `${processId}: version ${res.version} active in ${res.to} (as in ${res.from}; ${res.to} ran ${res.previous === null ? 'none' : `version ${res.previous}`})\n`,
        );
    });

  flow
    .command('schema')
    .description('print the JSON Schema of flow files (point your editor at it)')
    .addHelpText(
      'after',
      '\nExample:\n  $ wfx flow schema > flow.schema.json\n  then, first line of a flow file:  # yaml-language-server: $schema=./flow.schema.json',
    )
    .action(() => printJson(ctx, flowSchema()));

  registerFlowNew(flow, ctx);
}

/**
 * The files of `given` that are flows: a flow test file beside them (`flows/*.yaml` matches
 * `order.test.yaml` too) is left out, with a note on stderr; `wfx test` runs it.
 */
function flowsOnly(ctx: CliContext, given: readonly string[]): string[] {
  const tests = given.filter((f) => isFlowTestFile(f));
  if (tests.length > 0)
    ctx.stderr.write(
      `note: left out ${tests.join(', ')}: flow test file${tests.length === 1 ? '' : 's'} (wfx test runs ${tests.length === 1 ? 'it' : 'them'})\n`,
    );
  return given.filter((f) => !isFlowTestFile(f));
}
