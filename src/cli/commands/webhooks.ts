import { InvalidArgumentError, Option, type Command } from 'commander';
import {
  WEBHOOK_DEFAULT_MAX_BODY_BYTES,
  WEBHOOK_MAX_RESPOND_SECONDS,
  WEBHOOK_MAX_BODY_BYTES_CEILING,
  WEBHOOK_MIN_BODY_BYTES,
  type DeliveryRecord,
  type EndpointEnvironment,
  type RegisterWebhookBody,
} from '../../shared/api/index.js';
import { parseBytes } from '../../shared/bytes.js';
import { WfxError } from '../../shared/errors.js';
import { PROVIDERS, verifyDelivery, type Provider, type Scheme } from '../../shared/webhooks/providers.js';
import { clientFor, collect } from '../api.js';
import { globals, printJson, readUserFile, type CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { table } from '../format.js';
import { freshEvent, processedDelivery } from '../webhook-send.js';
import { registerDeliveryCommands } from './webhook-deliveries.js';
import { addListCommand, addNamedCommand } from '../named-commands.js';
import { givenOnly, wholeNumber } from '../options.js';

/** What `--respond-within` does. */
const RESPOND_HELP =
  'answer each delivery with the output of the execution it starts (its status and body) once it ends within so many seconds, else 202';

/** `--max-body-bytes`: a size (parseBytes), within the daemon's bounds. */
export function parseBodyBytes(value: string): number {
  const n = parseBytes(value) ?? NaN;
  if (!(n >= WEBHOOK_MIN_BODY_BYTES && n <= WEBHOOK_MAX_BODY_BYTES_CEILING))
    throw new InvalidArgumentError(
      `must be bytes (or KiB, MiB) from ${WEBHOOK_MIN_BODY_BYTES} to ${WEBHOOK_MAX_BODY_BYTES_CEILING} (25MiB)`,
    );
  return n;
}

/** `wfx webhooks create|update|list|deliveries|redeliver|rotate|delete|send|verify`. */
export function registerWebhooks(program: Command, ctx: CliContext): void {
  const webhooks = program
    .command('webhooks')
    .description(
      'webhook registrations: endpoints for GitHub, Stripe, Slack, Standard Webhooks and custom senders (needs ADMIN)',
    );

  webhooks
    .command('create')
    .description('register a webhook; prints its endpoint URLs and signing secrets (shown this once)')
    .requiredOption('--name <name>', "the name flows' webhook triggers use")
    .addOption(new Option('--provider <provider>', 'who sends').choices([...PROVIDERS]).makeOptionMandatory())
    .option('--per-environment', 'separate DEVELOPMENT and PRODUCTION endpoints, each with its own token and secret')
    .option('--secret <secret>', 'the signing secret the provider has (generated when absent)')
    .option('--no-auth', 'no signature check (authType NONE): anyone with the URL can trigger')
    .option('--signature-header <name>', 'CUSTOM: the header with the signature')
    .addOption(new Option('--algorithm <alg>', 'CUSTOM: the HMAC hash').choices(['sha1', 'sha256', 'sha512']))
    .addOption(new Option('--encoding <enc>', 'CUSTOM: how the signature is written').choices(['hex', 'base64']))
    .option('--prefix <text>', 'CUSTOM: text before the signature, e.g. sha256=')
    .option('--event-type-header <name>', 'CUSTOM: the header naming the event type')
    .option('--event-type-path <path>', 'CUSTOM: the dotted path of the event type in the body')
    .option('--event-id-header <name>', 'CUSTOM: the header with the event id (idempotency)')
    .option('--event-id-path <path>', 'CUSTOM: the dotted path of the event id in the body')
    .option(
      '--max-body-bytes <size>',
      `the largest body a delivery may have: bytes, or KiB/MiB (default ${WEBHOOK_DEFAULT_MAX_BODY_BYTES / 1024 / 1024}MiB, at most 25MiB); a larger one is answered 413 and logged`,
      parseBodyBytes,
    )
    .option('--respond-within <seconds>', RESPOND_HELP, wholeNumber(1, WEBHOOK_MAX_RESPOND_SECONDS))
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx webhooks create --name github --provider GITHUB --secret "$GITHUB_WEBHOOK_SECRET"\n  $ wfx webhooks create --name stripe --provider STRIPE --per-environment',
    )
    .action(async (opts: Record<string, string | number | boolean | undefined>, cmd: Command) => {
      // The options go as given: the daemon validates them (commander checked the choices).
      const res = await (
        await clientFor(ctx, cmd)
      ).webhooks.register({
        name: opts.name,
        provider: opts.provider,
        environmentMode: opts.perEnvironment ? 'PER_ENVIRONMENT' : 'SHARED',
        authType: opts.auth === false ? 'NONE' : 'HMAC',
        ...givenOnly({
          secret: opts.secret,
          signatureHeader: opts.signatureHeader,
          algorithm: opts.algorithm,
          encoding: opts.encoding,
          prefix: opts.prefix,
          eventTypeHeader: opts.eventTypeHeader,
          eventTypePath: opts.eventTypePath,
          eventIdHeader: opts.eventIdHeader,
          eventIdPath: opts.eventIdPath,
          maxBodyBytes: opts.maxBodyBytes,
          respondWithin: opts.respondWithin,
        }),
      } as RegisterWebhookBody);
      if (globals(cmd).json) return printJson(ctx, res);
      for (const e of res.endpoints)
        ctx.stdout.write(`${e.environment}\n  url     ${e.url}\n  secret  ${e.secret ?? '(none: authType NONE)'}\n`);
      ctx.stderr.write("the secrets are shown this once; paste them into the provider's webhook settings\n");
    });

  webhooks
    .command('update')
    .description("change a registration's limits; its endpoints and secrets stay")
    .argument('<name>')
    .option(
      '--max-body-bytes <size>',
      'the largest body a delivery may have: bytes, or KiB/MiB (at most 25MiB)',
      parseBodyBytes,
    )
    .option('--respond-within <seconds>', RESPOND_HELP, wholeNumber(1, WEBHOOK_MAX_RESPOND_SECONDS))
    .option('--respond-at-once', 'answer each delivery at once again (200 {received: true})')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx webhooks update github --max-body-bytes 5MiB\n  $ wfx webhooks update signup-form --respond-within 10',
    )
    .action(
      async (
        name: string,
        opts: { maxBodyBytes?: number; respondWithin?: number; respondAtOnce?: boolean },
        cmd: Command,
      ) => {
        if (opts.maxBodyBytes === undefined && opts.respondWithin === undefined && opts.respondAtOnce !== true)
          throw new WfxError(
            'USAGE_ERROR',
            'say what to change: --max-body-bytes, --respond-within or --respond-at-once',
          );
        const res = await (
          await clientFor(ctx, cmd)
        ).webhooks.update(name, {
          ...(opts.maxBodyBytes !== undefined && { maxBodyBytes: opts.maxBodyBytes }),
          ...(opts.respondWithin !== undefined && { respondWithin: opts.respondWithin }),
          ...(opts.respondAtOnce === true && { respondWithin: null }),
        });
        if (globals(cmd).json) return printJson(ctx, res);
        const answer =
          res.respondWithin === undefined ? 'answered at once' : `answered by the flow within ${res.respondWithin} s`;
        ctx.stdout.write(`${res.name}: bodies up to ${res.maxBodyBytes} bytes, deliveries ${answer}\n`);
      },
    );

  addListCommand(webhooks, ctx, {
    description: 'webhook registrations and their endpoint URLs (no secrets)',
    example: '$ wfx webhooks list',
    list: (client) => client.webhooks.list(),
    table: (items) =>
      table(
        ['NAME', 'PROVIDER', 'ENVIRONMENT', 'URL'],
        items.flatMap((w) => w.endpoints.map((e) => [w.name, w.provider, e.environment, e.url])),
      ),
  });

  registerDeliveryCommands(webhooks, ctx);

  webhooks
    .command('rotate')
    .description('a new signing secret (shown once); the previous one keeps working for a while')
    .addHelpText('after', '\nExample:\n  $ wfx webhooks rotate stripe --previous-valid-for 1h')
    .argument('<name>')
    .addOption(new Option('--env <environment>', 'only this endpoint').choices(['ALL', 'DEVELOPMENT', 'PRODUCTION']))
    .option('--previous-valid-for <duration>', 'how long the previous secret still verifies', '24h')
    .action(async (name: string, opts: { env?: EndpointEnvironment; previousValidFor: string }, cmd: Command) => {
      const res = await (
        await clientFor(ctx, cmd)
      ).webhooks.rotate(name, { ...(opts.env && { environment: opts.env }), previousValidFor: opts.previousValidFor });
      if (globals(cmd).json) return printJson(ctx, res);
      for (const r of res.rotated) ctx.stdout.write(`${r.environment}  ${r.secret}\n`);
      ctx.stderr.write(`the previous secret verifies until ${res.previousValidUntil ?? 'now'}\n`);
    });

  addNamedCommand(webhooks, ctx, 'delete', {
    description: 'delete a registration; its endpoints stop at once',
    example: '$ wfx webhooks delete github',
    call: (client, name) => client.webhooks.delete(name),
    human: (_answer, name) => `${name} deleted\n`,
  });

  webhooks
    .command('listen')
    .description(
      "each delivery of a registration as it arrives: its event, the signature's verdict, what it started or why nothing",
    )
    .argument('<name>')
    .addHelpText(
      'after',
      '\nRuns until Ctrl-C (exit 0). With --json, one delivery a line.\n\nExample:\n  $ wfx webhooks listen github',
    )
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const json = globals(cmd).json === true;
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        if (!json) ctx.stderr.write(`listening to ${name}'s deliveries; Ctrl-C to stop\n`);
        for await (const ev of client.webhooks.streamDeliveries(name, stop.signal)) {
          if (ev.event !== 'delivery' || ev.data === undefined) continue;
          const d = JSON.parse(ev.data) as DeliveryRecord;
          ctx.stdout.write(json ? `${ev.data}\n` : `${describeDelivery(d)}\n`);
        }
        if (!stop.signal.aborted)
          throw new WfxError(
            'DAEMON_UNREACHABLE',
            'the daemon ended the stream (it is stopping); listen again once it is back',
          );
      } catch (err) {
        if (!stop.signal.aborted) throw err;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });

  webhooks
    .command('send')
    .description(
      'sign a payload as the provider would, post it to the endpoint, and say what it started: test a webhook flow without a tunnel',
    )
    .argument('<name>')
    .requiredOption('--payload <file>', 'the body to send (JSON, or a form body)')
    .addOption(new Option('--env <environment>', 'which endpoint').choices(['ALL', 'DEVELOPMENT', 'PRODUCTION']))
    .option('--event <type>', 'the event type, for providers that carry it in a header (GitHub, custom)')
    .option('--content-type <type>', "the body's content type", 'application/json')
    .option('--replay', "send the payload as it is, its event id kept: a provider's redelivery (a duplicate)")
    .addHelpText(
      'after',
      '\nEach send is a new event (a fresh event id and time) unless --replay.\nExit 0 when it started an execution, 1 when it started none (the delivery log says why).\n\nExample:\n  $ wfx webhooks send github --payload pull_request.json --event pull_request',
    )
    .action(
      async (
        name: string,
        opts: { payload: string; env?: EndpointEnvironment; event?: string; contentType: string; replay?: boolean },
        cmd: Command,
      ) => {
        const client = await clientFor(ctx, cmd);
        const given = await readUserFile(ctx, opts.payload, 'payload');
        const body = opts.replay ? given : freshEvent(await client.webhooks.get(name), given);
        const signed = await client.webhooks.sign(name, {
          body: body.toString('base64'),
          ...(opts.env && { environment: opts.env }),
          ...(opts.event && { eventType: opts.event }),
        });
        const res = await fetch(signed.url, {
          method: 'POST',
          headers: { 'content-type': opts.contentType, ...signed.headers },
          body,
        });
        const answer = (await res.json().catch(() => ({}))) as { deliveryId?: unknown };
        if (!res.ok)
          throw new WfxError('VALIDATION_ERROR', `the endpoint answered ${res.status}: ${JSON.stringify(answer)}`);
        if (typeof answer.deliveryId !== 'string')
          throw new WfxError('VALIDATION_ERROR', `the endpoint answered no delivery id: ${JSON.stringify(answer)}`);
        const d = await processedDelivery(client, name, answer.deliveryId);
        const event = `${d.eventType ?? 'event'}${d.eventId ? ` ${d.eventId}` : ''}`;
        if (globals(cmd).json) printJson(ctx, { ...d, url: signed.url });
        else if (d.startedInstanceIds.length > 0)
          ctx.stdout.write(
            `delivered ${event} to the ${signed.environment} endpoint: started ${d.startedInstanceIds.join(', ')}\n`,
          );
        if (d.startedInstanceIds.length === 0)
          throw new WfxError(
            'WEBHOOK_NOTHING_STARTED',
            `delivered ${event} to the ${signed.environment} endpoint (delivery ${d.deliveryId}), started nothing: ${d.reason ?? 'no reason recorded'}`,
          );
      },
    );

  webhooks
    .command('verify')
    .description(
      "check one captured delivery offline with the daemon's own verifier: exit 0 valid, 1 invalid (and why)",
    )
    .addOption(new Option('--provider <provider>', 'who sent it').choices([...PROVIDERS]).makeOptionMandatory())
    .requiredOption('--secret <secret>', 'the signing secret')
    .option('--header <header>', '"Name: value" of the delivery; repeatable', collect, [])
    .requiredOption('--body <file>', 'the raw body as received')
    .option('--at <unixSeconds>', 'judge timestamps at this instant (default now)')
    .option('--signature-header <name>', 'CUSTOM: the signature header')
    .addOption(
      new Option('--algorithm <alg>', 'CUSTOM: the HMAC hash').choices(['sha1', 'sha256', 'sha512']).default('sha256'),
    )
    .addOption(
      new Option('--encoding <enc>', 'CUSTOM: the signature encoding').choices(['hex', 'base64']).default('hex'),
    )
    .option('--prefix <text>', 'CUSTOM: text before the signature')
    .addHelpText(
      'after',
      '\nExample:\n  $ wfx webhooks verify --provider STRIPE --secret whsec_... --header "Stripe-Signature: t=1700000000,v1=5257a8..." --body event.json --at 1700000000',
    )
    .action(
      async (
        opts: {
          provider: Provider;
          secret: string;
          header: string[];
          body: string;
          at?: string;
          signatureHeader?: string;
          algorithm: 'sha1' | 'sha256' | 'sha512';
          encoding: 'hex' | 'base64';
          prefix?: string;
        },
        cmd: Command,
      ) => {
        const headers: Record<string, string> = {};
        for (const h of opts.header) {
          const i = h.indexOf(':');
          if (i <= 0) throw new WfxError('USAGE_ERROR', `--header takes "Name: value", got ${h}`);
          headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
        }
        if (opts.at !== undefined && !/^\d+$/.test(opts.at))
          throw new WfxError('USAGE_ERROR', '--at takes Unix seconds');
        if (opts.provider === 'CUSTOM' && !opts.signatureHeader)
          throw new WfxError('USAGE_ERROR', 'a CUSTOM provider needs --signature-header');
        const scheme: Scheme = {
          provider: opts.provider,
          authType: 'HMAC',
          ...(opts.provider === 'CUSTOM' && {
            custom: {
              signatureHeader: opts.signatureHeader!.toLowerCase(),
              algorithm: opts.algorithm,
              encoding: opts.encoding,
              ...(opts.prefix && { prefix: opts.prefix }),
            },
          }),
        };
        const at = opts.at === undefined ? new Date() : new Date(Number(opts.at) * 1000);
        const verdict = verifyDelivery(scheme, [opts.secret], headers, await readUserFile(ctx, opts.body, 'body'), at);
        if (globals(cmd).json) printJson(ctx, verdict);
        else ctx.stdout.write(verdict.ok ? 'valid\n' : `invalid: ${verdict.reason}\n`);
        if (!verdict.ok) ctx.exitCode = EXIT.FAILED;
      },
    );
}

/** One line of `webhooks listen`: when, which event, the verdict, and what it started or why not. */
export function describeDelivery(d: DeliveryRecord): string {
  const event = `${d.eventType ?? '-'}${d.eventId ? ` ${d.eventId}` : ''}`;
  const verdict = d.refused === 'TOO_LARGE' ? 'body TOO LARGE' : d.signatureOk ? 'signature ok' : 'signature REFUSED';
  const outcome =
    d.startedInstanceIds.length > 0
      ? `started ${d.startedInstanceIds.join(', ')}`
      : `nothing started: ${d.reason ?? '-'}`;
  return `${d.receivedAt}  ${d.environment}  ${event}  ${verdict}  ${outcome}`;
}
