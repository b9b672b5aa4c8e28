import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { isWfxError } from '../shared/errors.js';
import { VERSION } from '../shared/version.js';
import { registerCron } from './commands/cron.js';
import { registerDaemon } from './commands/daemon.js';
import { registerExpr } from './commands/expr.js';
import { registerDev } from './commands/dev.js';
import { registerEnv } from './commands/env.js';
import { registerFlow } from './commands/flow.js';
import { registerInstances } from './commands/instances.js';
import { registerKeys } from './commands/keys.js';
import { registerLogin } from './commands/login.js';
import { registerRun } from './commands/run.js';
import { registerTask } from './commands/task.js';
import { registerWebhooks } from './commands/webhooks.js';
import type { CliContext } from './context.js';
import { EXIT, exitCodeFor } from './exit-codes.js';

/** Builds the `wfx` command tree. Wiring only: each command lives in its own module. */
export function buildProgram(ctx: CliContext): Command {
  // `-V, --version` is handled in main() when it comes first: commander would also take a
  // subcommand's own `--version <n>` (wfx run --version 3) for it.
  const program = new Command('wfx')
    .description('wfx: run durable workflows locally. Talks to a wfx daemon over its HTTP API.')
    .addHelpText('after', '\n  -V, --version      print the version of wfx (as the first argument)')
    .option('--url <url>', 'daemon URL (default: WFX_URL, the local daemon, http://127.0.0.1:7878)')
    .option('--api-key <key>', 'API key (default: WFX_API_KEY, `wfx login`, the local bootstrap.key)')
    .option('--data-dir <dir>', 'data directory (default: WFX_DATA_DIR, the nearest .wfx/)')
    .option('--json', 'machine output on stdout, nothing else')
    .option('--no-color', 'no colour (also NO_COLOR)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
    });
  registerDaemon(program, ctx);
  registerDev(program, ctx);
  registerFlow(program, ctx);
  registerRun(program, ctx);
  registerInstances(program, ctx);
  registerTask(program, ctx);
  registerKeys(program, ctx);
  registerEnv(program, ctx);
  registerWebhooks(program, ctx);
  registerExpr(program, ctx);
  registerCron(program, ctx);
  registerLogin(program, ctx);
  for (const cmd of allCommands(program)) {
    cmd.exitOverride();
    cmd.configureOutput({ writeOut: (s) => ctx.stdout.write(s), writeErr: (s) => ctx.stderr.write(s) });
  }
  return program;
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

/**
 * Runs `wfx` with `argv` (process.argv shape) and resolves to the exit code. Expected errors
 * print `CODE: message` and a hint on stderr; anything else propagates to bin/wfx.js, which
 * prints the stack and asks for a report.
 */
export async function main(argv: string[], overrides: Partial<CliContext> = {}): Promise<number> {
  const ctx: CliContext = {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    binPath: fileURLToPath(new URL('../../../bin/wfx.js', import.meta.url)),
    exitCode: EXIT.OK,
    ...overrides,
  };
  if (argv[2] === '-V' || argv[2] === '--version') {
    ctx.stdout.write(`${VERSION}\n`);
    return EXIT.OK;
  }
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv);
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help') return EXIT.OK;
      // commander has printed the usage problem already.
      return EXIT.USAGE;
    }
    if (isWfxError(err)) {
      ctx.stderr.write(`${err.code}: ${err.message}\n`);
      if (err.hint) ctx.stderr.write(`hint: ${err.hint}\n`);
      return exitCodeFor(err.code);
    }
    throw err;
  }
}
