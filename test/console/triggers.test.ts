import t from 'tap';
import { notFiringReason, redeliverable, triggerWords, verdictWord } from '../../src/console/model/triggers.js';
import type { DeliveryRecord } from '../../src/shared/api/webhooks.js';
import type { TriggerHealth } from '../../src/shared/api/triggers.js';

const subject = {
  processId: 'p',
  flowName: 'F',
  organization: 'default',
  environment: 'PRODUCTION',
  version: '1',
} as const;
const base = { lastFire: null, nextFire: null, lastError: null } as const;

t.test('a trigger in words, and why it does not fire', async (t) => {
  const schedule: TriggerHealth = {
    ...subject,
    ...base,
    type: 'schedule',
    key: 'k',
    cron: '0 2 * * *',
    timezone: 'Europe/Berlin',
    missedRuns: 'last',
    overlap: 'allow',
    waiting: 0,
    state: 'active',
    nextFires: [],
  };
  t.equal(triggerWords(schedule), 'Schedule 0 2 * * * (Europe/Berlin), missed runs: last');
  t.equal(notFiringReason(schedule), null, 'an active schedule fires');
  const paused: TriggerHealth = { ...schedule, state: 'disabled', overlap: 'skip', waiting: 2 } as TriggerHealth;
  t.equal(
    triggerWords(paused),
    'Schedule 0 2 * * * (Europe/Berlin), missed runs: last, overlap: skip, 2 fire times waiting',
  );
  t.match(notFiringReason(paused), /^Paused: wfx schedules resume/, 'a paused schedule says how to resume it');
  const gone: TriggerHealth = {
    ...subject,
    ...base,
    type: 'webhook',
    webhook: 'gh',
    state: 'disabled',
    lastError: 'no webhook registration named "gh"',
  };
  t.equal(triggerWords(gone), 'Webhook gh');
  t.equal(notFiringReason(gone), 'no webhook registration named "gh"');
  t.equal(notFiringReason({ ...gone, lastError: null }), 'Disabled.', 'a state without its error still says so');
  const byHand: TriggerHealth = {
    ...subject,
    ...base,
    type: 'on-demand',
    description: null,
    state: 'active',
    lastError: null,
  };
  t.equal(triggerWords(byHand), 'On demand');
  t.match(notFiringReason(byHand), /by hand/);
  const mail: TriggerHealth = {
    ...subject,
    ...base,
    type: 'email',
    connection: 'support',
    state: 'failing',
    lastError: 'ECONNREFUSED',
  };
  t.equal(triggerWords(mail), 'Email support');
});

t.test('a delivery: its verdict, and whether it can be redelivered', async (t) => {
  const ok: DeliveryRecord = {
    deliveryId: 'd',
    receivedAt: '2030-01-01T00:00:00.000Z',
    environment: 'ALL',
    eventType: 'push',
    eventId: 'e',
    signatureOk: true,
    reason: null,
    startedInstanceIds: [],
    kept: { blob: 'b', bytes: 2 },
  };
  t.equal(verdictWord(ok), 'verified');
  t.ok(redeliverable(ok));
  const { kept: _kept, ...notKept } = ok;
  t.notOk(redeliverable(notKept), 'its body no longer kept');
  t.equal(verdictWord({ ...ok, signatureOk: false, refused: 'SIGNATURE' }), 'refused');
  t.notOk(redeliverable({ ...ok, signatureOk: false, refused: 'SIGNATURE' }));
  t.equal(verdictWord({ ...ok, refused: 'DUPLICATE' }), 'duplicate');
  t.notOk(redeliverable({ ...ok, refused: 'DUPLICATE' }));
  t.equal(verdictWord({ ...ok, signatureOk: false, refused: 'TOO_LARGE' }), 'too large');
  const pending = { deliveryId: 'p', receivedAt: ok.receivedAt, environment: 'ALL', pending: true } as const;
  t.equal(verdictWord(pending), 'pending');
  t.notOk(redeliverable(pending));
});
