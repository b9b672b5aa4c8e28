import { InvalidArgumentError, type Command } from 'commander';
import { clientFor, collect, dataOf } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';

/** `wfx event send`. */
export function registerEvent(program: Command, ctx: CliContext): void {
  const event = program.command('event').description('deliver messages and signals to waiting catch events');
  event
    .command('send')
    .description('deliver a message or signal (resumes matching catch events; with --ttl kept until one waits)')
    .argument('<eventType>', 'the messageRef the catch events wait for')
    .requiredOption('--correlation-key <key>', 'matches message subscriptions with this key (signals match any)')
    .option('--data <json>', 'event data: a JSON object, or @file (each key becomes a variable)', '{}')
    .option('--set <key=value>', 'one data field; repeatable', collect, [])
    .option('--ttl <seconds>', 'keep it this long if nothing waits yet', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number of seconds');
      return n;
    })
    .option('--message-id <id>', 'a repeat with the same id is a no-op while the first is kept')
    .addHelpText(
      'after',
      `\nExample:\n  $ wfx event send payment-received --correlation-key order-42 --data '{"paid":99}' --ttl 3600`,
    )
    .action(
      async (
        eventType: string,
        opts: { correlationKey: string; data: string; set: string[]; ttl?: number; messageId?: string },
        cmd: Command,
      ) => {
        const res = await (
          await clientFor(ctx, cmd)
        ).events.send({
          eventType,
          correlationKey: opts.correlationKey,
          data: await dataOf(ctx, opts),
          ...(opts.ttl !== undefined && { ttlSeconds: opts.ttl }),
          ...(opts.messageId !== undefined && { messageId: opts.messageId }),
        });
        if (globals(cmd).json) return printJson(ctx, res);
        if (res.status === 'resumed')
          for (const m of res.matched) ctx.stdout.write(`resumed ${m.processInstanceId} at ${m.nodeId}\n`);
        else ctx.stdout.write(`kept for ${opts.ttl} s: nothing waits for ${eventType} yet\n`);
      },
    );
}
