import { relative, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { Environment, PlannedChange, ProjectApplied, ProjectProblem } from '../../shared/api/index.js';
import { isWfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { exitCodeFor } from '../exit-codes.js';

const envOption = (what = 'the environment its flows, variables and schedules are applied to') =>
  new Option('--env <environment>', what).choices(['DEVELOPMENT', 'PRODUCTION']).default('PRODUCTION');

const SIGN: Record<PlannedChange['change'], string> = { create: '+', update: '~', remove: '-', unchanged: '=' };

/** A plan's lines: `+ kind name (file)`, each detail indented under it. */
function planLines(changes: readonly PlannedChange[]): string {
  return changes
    .map((c) => {
      const head = `${SIGN[c.change]} ${c.kind} ${c.name}${c.file !== undefined ? ` (${c.file})` : ''}`;
      const details = c.change === 'unchanged' ? [] : c.details.map((d) => `    ${d}\n`);
      return `${head}\n${details.join('')}`;
    })
    .join('');
}

/** A refusal's problem as `where: CODE message`. */
function problemLine(p: ProjectProblem): string {
  const where =
    p.file !== undefined
      ? `${p.file}${p.line !== undefined ? `:${p.line}:${p.column ?? 1}` : ''}`
      : `wfx.yaml ${p.kind}${p.name !== undefined ? ` ${p.name}` : ''}`;
  return `${where}: ${p.code}: ${p.message}`;
}

/** `wfx apply DIR` and `wfx export DIR`: deploys of a project directory (docs/deploys.md). */
export function registerApply(program: Command, ctx: CliContext): void {
  program
    .command('apply')
    .argument('<dir>', 'the project directory: wfx.yaml, and its flow files (under flows/ when it has one)')
    .description('make the daemon hold what a project directory declares, as one change (needs ADMIN)')
    .addOption(envOption())
    .option('--org <organization>', 'the organization (system keys)')
    .option('--dry-run', 'print the plan only: nothing changes')
    .option('--prune', 'remove what the project no longer declares (flows are deactivated in the environment)')
    .option(
      '--from-env',
      "set each secret the project names from this program's environment variable of that name, when it has one, in the same change",
    )
    .addHelpText(
      'after',
      '\nPlan lines: + created, ~ changed, - removed, = unchanged. A problem anywhere refuses the whole apply.\n' +
        'Examples:\n  $ wfx apply . --dry-run\n  $ WAREHOUSE_TOKEN=$CI_TOKEN wfx apply . --env PRODUCTION --prune --from-env --json',
    )
    .action(
      async (
        dir: string,
        opts: { env: Environment; org?: string; dryRun?: boolean; prune?: boolean; fromEnv?: boolean },
        cmd: Command,
      ) => {
        const json = globals(cmd).json === true;
        const { readProject, locateConfigError, secretsNamed } = await import('../project-dir.js');
        const project = await readProject(resolve(ctx.cwd, dir));
        const secretValues: Record<string, string> = {};
        if (opts.fromEnv === true)
          for (const name of secretsNamed(project)) {
            const value = ctx.env[name];
            if (value !== undefined && value !== '') secretValues[name] = value;
          }
        const client = await clientFor(ctx, cmd);
        let res: ProjectApplied;
        try {
          res = await client.project.apply({
            environment: opts.env,
            ...(opts.org !== undefined && { organization: opts.org }),
            dryRun: opts.dryRun === true,
            prune: opts.prune === true,
            flows: [...project.flows],
            config: project.config,
            ...(Object.keys(secretValues).length > 0 && { secretValues }),
          });
        } catch (err) {
          if (isWfxError(err, 'PROJECT_INVALID')) {
            const problems = (err.details as { problems?: ProjectProblem[] } | undefined)?.problems ?? [];
            if (json) printJson(ctx, { error: err.code, message: err.message, problems });
            for (const p of problems) ctx.stderr.write(`${problemLine(p)}\n`);
            ctx.stderr.write(`${err.code}: ${err.message}\n`);
            ctx.exitCode = exitCodeFor(err.code);
            return;
          }
          if (isWfxError(err, 'VALIDATION_ERROR')) {
            err.message = locateConfigError(err.message, project.configSource);
          }
          throw err;
        }
        if (json) return printJson(ctx, res);
        ctx.stdout.write(planLines(res.changes));
        const { create, update, remove, unchanged } = res.counts;
        const [c, u, r] = res.applied ? ['created', 'changed', 'removed'] : ['to create', 'to change', 'to remove'];
        const counts = `${create} ${c}, ${update} ${u}, ${remove} ${r}, ${unchanged} unchanged`;
        ctx.stdout.write(
          res.applied
            ? `applied to ${res.environment} in ${res.organization}: ${counts}\n`
            : `dry run for ${res.environment} in ${res.organization}: ${counts}; nothing changed\n`,
        );
      },
    );

  program
    .command('export')
    .argument('<dir>', 'where to write wfx.yaml and flows/')
    .description(
      'write what `wfx apply` reads, from the daemon: the flows an environment runs and wfx.yaml (no secret values)',
    )
    .addOption(envOption('the environment whose flows and schedules are written'))
    .option('--org <organization>', 'the organization (system keys)')
    .option('--force', 'write over files export makes that exist already')
    .addHelpText('after', '\nExample:\n  $ wfx export ./deploy && wfx apply ./deploy --dry-run   # only = lines')
    .action(async (dir: string, opts: { env: Environment; org?: string; force?: boolean }, cmd: Command) => {
      const { exportedFiles, writeProject } = await import('../project-dir.js');
      const client = await clientFor(ctx, cmd);
      const project = await client.project.export({
        environment: opts.env,
        ...(opts.org !== undefined && { organization: opts.org }),
      });
      const written = await writeProject(resolve(ctx.cwd, dir), exportedFiles(project), opts.force === true);
      if (globals(cmd).json) return printJson(ctx, { ...project, written });
      for (const file of written) ctx.stdout.write(`wrote ${relative(ctx.cwd, file)}\n`);
      ctx.stdout.write(
        `exported ${project.flows.length} flow${project.flows.length === 1 ? '' : 's'} of ${project.organization} as ${project.environment} runs them; set the secrets wfx.yaml names before applying elsewhere\n`,
      );
    });
}
