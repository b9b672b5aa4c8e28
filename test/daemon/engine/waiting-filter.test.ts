import t from 'tap';
import type { WaitingFor } from '../../../src/shared/api/index.js';
import { engineHarness } from '../../helpers/engine.js';

// Lists by what a running execution waits for (GET /process/instances?waiting=): from the
// execution itself, or from a cold one's summary alone; ended ones never wait.

const ORG = { organization: 'default' } as const;

const ASK = `processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, name: Review the batch, inputType: textbox, next: done }
  done: { type: endEvent }
`;
const NAP = `processId: AUTO
name: Nap
nodes:
  start: { type: startEvent, next: nap }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 1d, next: done }
  done: { type: endEvent }
`;
const PAID = `processId: AUTO
name: Paid
nodes:
  start: { type: startEvent, next: paid }
  paid: { type: intermediateCatchEvent, eventType: message, messageRef: paid, next: done }
  done: { type: endEvent }
`;
const QUICK = `processId: AUTO
name: Quick
nodes:
  start: { type: startEvent, next: done }
  done: { type: endEvent }
`;

for (const cold of [false, true]) {
  t.test(`waiting filters and where each waits, ${cold ? 'cold' : 'resident'}`, async (t) => {
    const h = await engineHarness(t, undefined, undefined, { cold });
    const ids: Record<string, string> = {};
    for (const [name, yaml] of Object.entries({ ask: ASK, nap: NAP, paid: PAID, quick: QUICK })) {
      const pid = await h.publish(yaml);
      ids[name] = (await h.start(pid)).processInstanceId;
      h.clock.advance(1000);
    }
    await h.rest();
    const list = async (waiting?: WaitingFor | 'any') =>
      (await h.engine.listExecutions({ ...ORG, limit: 50, ...(waiting !== undefined && { waiting }) })).items;
    const idsOf = async (waiting: WaitingFor | 'any') => (await list(waiting)).map((i) => i.processInstanceId);
    t.same(await idsOf('person'), [ids.ask], 'waiting for a person: the input node');
    t.same(await idsOf('timer'), [ids.nap]);
    t.same(await idsOf('event'), [ids.paid]);
    t.same(await idsOf('worker'), []);
    t.same(await idsOf('any'), [ids.paid, ids.nap, ids.ask], 'anything: every running one, newest first');
    const all = await list();
    t.equal(all.length, 4, 'no filter: the completed one too');
    t.same(all.find((i) => i.processInstanceId === ids.ask)?.waits, [
      { nodeId: 'ask', nodeName: 'Review the batch', for: 'person' },
    ]);
    t.same(all.find((i) => i.processInstanceId === ids.paid)?.waits, [
      { nodeId: 'paid', nodeName: 'paid', for: 'event' },
    ]);
    t.notOk('waits' in all.find((i) => i.processInstanceId === ids.quick)!, 'an ended one waits nowhere');
    t.same(
      (await h.engine.listExecutions({ ...ORG, limit: 50, waiting: 'person', stateCd: 1 })).items,
      [],
      'a completed one never waits',
    );
  });
}
