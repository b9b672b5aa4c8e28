/* `wfx webhooks deliveries` (the log, or one delivery with its headers and body) and `wfx webhooks redeliver`. */
import type { Command } from 'commander';
import type { DeliveryDetail, DeliveryView } from '../../shared/api/index.js';
import { clientFor } from '../api.js';
import { globals, printJson, type CliContext } from '../context.js';
import { table } from '../format.js';

/** The SIGNATURE column: ok, refused, `-` for a body refused unread (too large), pending. */
function signatureColumn(d: DeliveryView): string {
  if ('pending' in d) return 'pending';
  if (d.refused === 'TOO_LARGE') return '-';
  return d.signatureOk ? 'ok' : 'refused';
}

/** One delivery as `deliveries NAME ID` prints it: its record, then its kept headers and body. */
function detailText(d: DeliveryDetail): string {
  const lines = [
    ['delivery', d.deliveryId],
    ['received', d.receivedAt],
    ['endpoint', d.environment],
    ['event', [d.eventType ?? '-', d.eventId ?? ''].join(' ').trim()],
    ['signature', signatureColumn(d)],
    ...(d.redeliveryOf ? [['redelivery', `of ${d.redeliveryOf} by ${d.by ?? '?'}`]] : []),
    ['started', d.startedInstanceIds.join(' ') || '-'],
    ...(d.reason ? [['why nothing', d.reason]] : []),
  ].map(([k, v]) => `${k!.padEnd(12)} ${v}\n`);
  if (!d.headers || !d.payload) return `${lines.join('')}body         not kept\n`;
  const headers = Object.entries(d.headers).map(([k, v]) => `  ${k}: ${v}\n`);
  const body = d.payload.text ?? `(not UTF-8; base64) ${d.payload.base64}`;
  return `${lines.join('')}headers\n${headers.join('')}body\n${body}${body.endsWith('\n') ? '' : '\n'}`;
}

/** Adds `deliveries` and `redeliver` to `wfx webhooks`. */
export function registerDeliveryCommands(webhooks: Command, ctx: CliContext): void {
  webhooks
    .command('deliveries')
    .description(
      'the last deliveries of a registration: signature verdict, event, what started, or why nothing did; with a delivery id, that one with its headers and body',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx webhooks deliveries github\n  $ wfx webhooks deliveries github 01a1fe30-edc6-7617-bd1f-84feb7474dfd',
    )
    .argument('<name>')
    .argument('[deliveryId]', 'show this delivery: its record, kept headers (no signature) and body')
    .action(async (name: string, deliveryId: string | undefined, _opts: unknown, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      if (deliveryId !== undefined) {
        const detail = await client.webhooks.delivery(name, deliveryId);
        return globals(cmd).json ? printJson(ctx, detail) : void ctx.stdout.write(detailText(detail));
      }
      const { items, refused } = await client.webhooks.deliveries(name);
      if (globals(cmd).json) return printJson(ctx, items);
      ctx.stdout.write(
        table(
          ['RECEIVED', 'ID', 'ENV', 'EVENT', 'SIGNATURE', 'BYTES', 'STARTED', 'WHY NOTHING STARTED'],
          items.map((d) =>
            'pending' in d
              ? [d.receivedAt, d.deliveryId, d.environment, '-', signatureColumn(d), '-', '-', '']
              : [
                  d.receivedAt,
                  d.deliveryId,
                  d.environment,
                  d.eventType ?? '-',
                  signatureColumn(d),
                  d.body ? String(d.body.bytes) : '-',
                  d.startedInstanceIds.join(' ') || '-',
                  d.reason ?? (d.redeliveryOf ? `redelivery of ${d.redeliveryOf}` : ''),
                ],
          ),
        ),
      );
      const shown = items.filter((d) => 'refused' in d && d.refused !== undefined).length;
      if (refused > shown) ctx.stderr.write(`${refused} deliveries refused in all; the log keeps the last ones\n`);
    });

  webhooks
    .command('redeliver')
    .description(
      "process a verified delivery's kept payload again as a new delivery, starting the flows subscribed now (no duplicate check)",
    )
    .addHelpText('after', '\nExample:\n  $ wfx webhooks redeliver github 01a1fe30-edc6-7617-bd1f-84feb7474dfd')
    .argument('<name>')
    .argument('<deliveryId>', 'a delivery of `wfx webhooks deliveries NAME`')
    .action(async (name: string, deliveryId: string, _opts: unknown, cmd: Command) => {
      const record = await (await clientFor(ctx, cmd)).webhooks.redeliver(name, deliveryId);
      if (globals(cmd).json) return printJson(ctx, record);
      const what = record.startedInstanceIds.length
        ? `started ${record.startedInstanceIds.join(' ')}`
        : `started nothing: ${record.reason ?? ''}`;
      ctx.stdout.write(`redelivered ${deliveryId} as ${record.deliveryId}: ${what}\n`);
    });
}
