import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CreateProviderBody, ProviderView, UpdateProviderBody } from '../../shared/api/index.js';
import { PROVIDER_KINDS } from '../../shared/api/ai-providers.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor, secretFromStdin } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';
import { orgOf, orgOption } from '../options.js';
import { addListCommand, addNamedCommand } from '../named-commands.js';

/** The options of `create` and `update`, as commander gives them. */
interface ProviderOptions {
  kind?: (typeof PROVIDER_KINDS)[number];
  baseUrl?: string;
  model?: string;
  apiKeyStdin?: boolean;
  removeApiKey?: boolean;
  modelPath?: string;
  threads?: number;
  contextSize?: number;
  default?: boolean;
  org?: string;
}

const integer = (min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new InvalidArgumentError(`must be a whole number ${min}..${max}`);
  return n;
};

/** Where a provider's model is: its base URL or its file. */
const whereOf = (p: ProviderView) => p.baseUrl ?? p.modelPath ?? '';

/** The fields of `opts` a create or update sends (the key read from stdin when asked). */
async function fieldsOf(ctx: CliContext, opts: ProviderOptions): Promise<Omit<CreateProviderBody, 'name' | 'kind'>> {
  return {
    ...(opts.baseUrl !== undefined && { baseUrl: opts.baseUrl }),
    ...(opts.model !== undefined && { model: opts.model }),
    ...(opts.apiKeyStdin && { apiKey: await secretFromStdin(ctx, 'API key') }),
    // A model file is named relative to where the command runs; the daemon needs its absolute path.
    ...(opts.modelPath !== undefined && { modelPath: resolve(ctx.cwd, opts.modelPath) }),
    ...(opts.threads !== undefined && { threads: opts.threads }),
    ...(opts.contextSize !== undefined && { contextSize: opts.contextSize }),
    ...(opts.default !== undefined && { isDefault: opts.default }),
  };
}

/** The options both `create` and `update` take. */
function providerOptions(cmd: Command): Command {
  return cmd
    .option('--base-url <url>', 'openai-compatible: the API base URL (e.g. http://127.0.0.1:11434/v1)')
    .option('--model <model>', "the model asked for (local: a label, default the file's name)")
    .option('--api-key-stdin', 'openai-compatible: read the API key from standard input')
    .option('--model-path <file>', 'local: the GGUF model file')
    .option('--threads <n>', 'local: CPU threads for inference', integer(1, 64))
    .option('--context-size <tokens>', 'local: the context size in tokens', integer(64, 1_048_576))
    .addOption(orgOption());
}

/** `wfx ai providers create|list|get|update|delete|test`: the model providers aiTasks call. */
export function registerAiProviders(program: Command, ctx: CliContext): void {
  const ai = program.command('ai').description('AI in flows: model providers (needs ADMIN)');
  const providers = ai.command('providers').description('the model providers aiTasks call, per organization');

  providerOptions(
    providers
      .command('create')
      .argument('<name>')
      .description('register a provider (the API key comes on stdin with --api-key-stdin; never shown again)')
      .addOption(new Option('--kind <kind>', 'how the model is reached').choices(PROVIDER_KINDS).makeOptionMandatory()),
  )
    .option('--default', "make it the organization's default provider")
    .addHelpText(
      'after',
      `
Examples:
  $ printf %s "$OPENAI_API_KEY" | wfx ai providers create openai --kind openai-compatible --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key-stdin --default
  $ wfx ai providers create ollama --kind openai-compatible --base-url http://127.0.0.1:11434/v1 --model llama3.2
  $ wfx ai providers create tiny --kind local --model-path models/qwen2.5-0.5b-instruct-q4_k_m.gguf --threads 2`,
    )
    .action(async (name: string, opts: ProviderOptions, cmd: Command) => {
      const p = await (
        await clientFor(ctx, cmd)
      ).aiProviders.create({ name, kind: opts.kind!, ...(await fieldsOf(ctx, opts)) }, orgOf(opts));
      if (globals(cmd).json) printJson(ctx, p);
      else
        ctx.stdout.write(`provider ${p.name} added (${p.kind}, model ${p.model}${p.isDefault ? ', default' : ''})\n`);
    });

  addListCommand(providers, ctx, {
    description: 'the providers (never their keys)',
    example: '$ wfx ai providers list --json',
    withOrg: true,
    list: (client, opts) => client.aiProviders.list(orgOf(opts)),
    table: (items) => {
      // A system key lists every organization's: then say whose each is.
      const orgs = new Set(items.map((p) => p.organization)).size > 1;
      return table(
        [...(orgs ? ['ORGANIZATION'] : []), 'NAME', 'KIND', 'MODEL', 'DEFAULT', 'KEY', 'WHERE'],
        items.map((p) => [
          ...(orgs ? [p.organization] : []),
          p.name,
          p.kind,
          p.model,
          p.isDefault ? 'yes' : '',
          p.hasApiKey ? 'set' : '',
          whereOf(p),
        ]),
      );
    },
  });

  addNamedCommand(providers, ctx, 'get', {
    description: 'one provider (never its key)',
    example: '$ wfx ai providers get openai',
    withOrg: true,
    call: (client, name, opts) => client.aiProviders.get(name, orgOf(opts)),
    human: (p) => {
      const rows: Array<[string, string | number | undefined]> = [
        ['name', p.name],
        ['organization', p.organization],
        ['kind', p.kind],
        ['model', p.model],
        ['base URL', p.baseUrl],
        ['model file', p.modelPath],
        ['threads', p.threads],
        ['context size', p.contextSize],
        ['API key', p.kind === 'openai-compatible' ? (p.hasApiKey ? 'set' : 'none') : undefined],
        ['default', p.isDefault ? 'yes' : 'no'],
        ['updated', p.updatedAt],
      ];
      return rows
        .filter(([, value]) => value !== undefined)
        .map(([label, value]) => `${label.padEnd(13)} ${value}\n`)
        .join('');
    },
  });

  providerOptions(
    providers.command('update').argument('<name>').description('change a provider (its kind never changes)'),
  )
    // Not --no-api-key: that would be read as the global --api-key (the credential) set to false.
    .option('--remove-api-key', 'remove the API key')
    .option('--default', "make it the organization's default provider")
    .option('--no-default', 'no longer the default')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx ai providers update openai --model gpt-4.1-mini\n  $ printf %s "$NEW_KEY" | wfx ai providers update openai --api-key-stdin',
    )
    .action(async (name: string, opts: ProviderOptions, cmd: Command) => {
      if (opts.apiKeyStdin && opts.removeApiKey)
        throw new WfxError('USAGE_ERROR', '--api-key-stdin and --remove-api-key do not go together');
      const body: UpdateProviderBody = { ...(await fieldsOf(ctx, opts)), ...(opts.removeApiKey && { apiKey: null }) };
      if (Object.keys(body).length === 0) throw new WfxError('USAGE_ERROR', 'name something to change (see --help)');
      const p = await (await clientFor(ctx, cmd)).aiProviders.update(name, body, orgOf(opts));
      if (globals(cmd).json) printJson(ctx, p);
      else ctx.stdout.write(`provider ${p.name} changed\n`);
    });

  addNamedCommand(providers, ctx, 'delete', {
    description: 'remove a provider (aiTasks naming it then fail with AI_PROVIDER_NOT_FOUND)',
    example: '$ wfx ai providers delete ollama',
    withOrg: true,
    call: (client, name, opts) => client.aiProviders.delete(name, orgOf(opts)),
    human: (_answer, name) => `provider ${name} deleted\n`,
  });

  addNamedCommand(providers, ctx, 'test', {
    description: 'send a tiny prompt through a provider: model, latency, token counts and the answer',
    example: '$ wfx ai providers test openai',
    withOrg: true,
    call: (client, name, opts) => client.aiProviders.test(name, orgOf(opts)),
    human: (res) =>
      `model ${res.model}: answered in ${res.latencyMs} ms, ${res.usage.inputTokens} input + ${res.usage.outputTokens} output tokens\n` +
      `answer: ${JSON.stringify(res.text)}\n`,
  });
}
