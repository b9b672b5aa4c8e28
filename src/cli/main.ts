import { fileURLToPath } from 'node:url';
import { Command, CommanderError, type OutputConfiguration } from 'commander';
import { isWfxError } from '../shared/errors.js';
import { VERSION } from '../shared/version.js';
import { dataDirOf, type CliContext, type GlobalOptions } from './context.js';
import { daemonElsewhere, elsewhereText } from './elsewhere.js';
import { EXIT, exitCodeFor } from './exit-codes.js';

type Register = (program: Command, ctx: CliContext) => void;

/**
 * The command modules, in the order of `wfx --help`, loaded when used. `wfx daemon ...` loads
 * the daemon module alone: a daemon start runs the CLI twice (the command, then the daemon
 * process it spawns), and loading the others would slow both (docs/decisions/019-restart-path.md).
 */
const DAEMON: () => Promise<Register> = async () => (await import('./commands/daemon.js')).registerDaemon;
const ALL: ReadonlyArray<() => Promise<Register>> = [
  DAEMON,
  async () => (await import('./commands/init.js')).registerInit,
  async () => (await import('./commands/dev.js')).registerDev,
  async () => (await import('./commands/flow.js')).registerFlow,
  async () => (await import('./commands/run.js')).registerRun,
  async () => (await import('./commands/instances.js')).registerInstances,
  async () => (await import('./commands/logs.js')).registerLogs,
  async () => (await import('./commands/task.js')).registerTask,
  async () => (await import('./commands/event.js')).registerEvent,
  async () => (await import('./commands/keys.js')).registerKeys,
  async () => (await import('./commands/env.js')).registerEnv,
  async () => (await import('./commands/secrets.js')).registerSecrets,
  async () => (await import('./commands/apply.js')).registerApply,
  async () => (await import('./commands/webhooks.js')).registerWebhooks,
  async () => (await import('./commands/email-connections.js')).registerEmailConnections,
  async () => (await import('./commands/ai-providers.js')).registerAiProviders,
  async () => (await import('./commands/memory.js')).registerMemory,
  async () => (await import('./commands/files.js')).registerFiles,
  async () => (await import('./commands/audit.js')).registerAudit,
  async () => (await import('./commands/domains.js')).registerDomains,
  async () => (await import('./commands/jobs.js')).registerJobs,
  async () => (await import('./commands/worker.js')).registerWorker,
  async () => (await import('./commands/mcp.js')).registerMcp,
  async () => (await import('./commands/expr.js')).registerExpr,
  async () => (await import('./commands/test.js')).registerTest,
  async () => (await import('./commands/cron.js')).registerCron,
  async () => (await import('./commands/schedules.js')).registerSchedules,
  async () => (await import('./commands/login.js')).registerLogin,
  async () => (await import('./commands/console.js')).registerConsole,
  async () => (await import('./commands/tui.js')).registerTui,
  async () => (await import('./commands/completion.js')).registerCompletion,
];

/** The global options that take a value as the next argument. */
const VALUE_OPTIONS = new Set(['--url', '--api-key', '--data-dir']);

/** The first argument that names a command (after the global options), or null. */
function commandOf(argv: readonly string[]): string | null {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('-')) return arg;
    if (VALUE_OPTIONS.has(arg)) i++;
  }
  return null;
}

/**
 * Builds the `wfx` command tree (only the daemon commands when `argv` runs one of them).
 * Wiring only: each command lives in its own module.
 */
export async function buildProgram(ctx: CliContext, argv: readonly string[] = []): Promise<Command> {
  // `-V, --version` is handled in main() when it comes first: commander would also take a
  // subcommand's own `--version <n>` (wfx run --version 3) for it.
  const program = new Command('wfx')
    .description('wfx: run durable workflows locally. Talks to a wfx daemon over its HTTP API.')
    .addHelpText('after', '\n  -V, --version      print the version of wfx (as the first argument)')
    .option('--url <url>', 'daemon URL (default: WFX_URL, the local daemon, WFX_DEFAULT_URL, http://127.0.0.1:7878)')
    .option('--api-key <key>', 'API key (default: WFX_API_KEY, `wfx login`, the local bootstrap.key)')
    .option('--data-dir <dir>', 'data directory (default: WFX_DATA_DIR, the nearest .wfx/)')
    .option('--json', 'machine output on stdout, nothing else')
    .option('--no-color', 'no colour (also NO_COLOR)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput(outputOf(ctx));
  const registers = await Promise.all(commandOf(argv) === 'daemon' ? [DAEMON()] : ALL.map((load) => load()));
  for (const register of registers) register(program, ctx);
  const output = outputOf(ctx);
  for (const cmd of allCommands(program)) {
    cmd.exitOverride();
    cmd.configureOutput(output);
  }
  return program;
}

type Stream = CliContext['stdout'] & { columns?: number; hasColors?: () => boolean };

/**
 * Commander's output, all of it from the context: its own defaults read process.stdout's width
 * and colours and process.env, which are not the command's when `main()` runs in a test.
 */
function outputOf(ctx: CliContext): OutputConfiguration {
  const forced = colorForcedBy(ctx.env);
  // Commander takes undefined as "80 columns", though its typings ask for a number.
  const width = (s: Stream) => (s.isTTY ? s.columns : undefined) as number;
  const colors = (s: Stream) => forced ?? (s.isTTY === true && s.hasColors?.() === true);
  return {
    writeOut: (s) => ctx.stdout.write(s),
    writeErr: (s) => ctx.stderr.write(s),
    getOutHelpWidth: () => width(ctx.stdout),
    getErrHelpWidth: () => width(ctx.stderr),
    getOutHasColors: () => colors(ctx.stdout),
    getErrHasColors: () => colors(ctx.stderr),
  };
}

/** Commander's reading of NO_COLOR, FORCE_COLOR and CLICOLOR_FORCE: on, off, or the stream decides. */
function colorForcedBy(env: NodeJS.ProcessEnv): boolean | undefined {
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return undefined;
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
    // A getter: process.stdin makes a stream when first read, which most commands never need.
    get stdin() {
      return process.stdin;
    },
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
  const program = await buildProgram(ctx, argv);
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
      // No credential fits: often a daemon of another directory answers the default URL; say so.
      if (err.code === 'UNAUTHORIZED') {
        const opts = program.opts<GlobalOptions>();
        const other = await daemonElsewhere(ctx, opts);
        if (other) ctx.stderr.write(`${elsewhereText(other, dataDirOf(ctx, opts))}\n`);
      }
      return exitCodeFor(err.code);
    }
    throw err;
  }
}
