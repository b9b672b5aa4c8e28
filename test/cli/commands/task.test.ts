import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../../helpers/cli.js';
import { agentDaemon, FOUR_CALLS } from '../../helpers/agent-daemon.js';

const ASK = `processId: 3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: number, formTitle: "How many for order {order}?", timeout: 1h, next: done }
  done: { type: endEvent }
`;
const REVIEW = `processId: 4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a
name: Review
nodes:
  start: { type: startEvent, next: review }
  review: { type: userTask, name: Review it, fields: [{ name: ok, type: boolean }], next: done }
  done: { type: endEvent }
`;

t.test(
  "wfx task list: a table of the waiting tasks, --flow keeps one flow's, --json, then an answered one is gone",
  async (t) => {
    const cwd = t.testdir({ 'ask.yaml': ASK, 'review.yaml': REVIEW });
    await startDaemon(t, { cwd });
    const run = (args: string[]) => wfxIn(args, { cwd });
    t.equal((await run(['task', 'list'])).stdout, 'no task waits\n');
    for (const f of ['ask.yaml', 'review.yaml']) t.equal((await run(['flow', 'publish', f])).code, 0);
    const ask = (await run(['run', '3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f', '--set', 'order=42'])).stdout.trim();
    const review = (await run(['run', '4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a'])).stdout.trim();

    const list = await run(['task', 'list']);
    t.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trimEnd().split('\n');
    t.match(lines[0], /^ID\s+NODE\s+INPUT\s+FLOW\s+WAITING SINCE\s+DUE\s+FIELDS\s+TITLE$/);
    const [, since, due] =
      new RegExp(
        `^${ask}\\s+ask\\s+number\\s+Ask v1\\s+(\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z)\\s+(\\S+)\\s+inputValue:number\\*\\s+How many for order 42\\?$`,
      ).exec(lines[1]!) ?? [];
    t.equal(Date.parse(due!) - Date.parse(since!), 3_600_000, 'due an hour after it began waiting (its timeout)');
    t.match(lines[2], new RegExp(`^${review}\\s+review\\s+form\\s+Review v1\\s+\\S+\\s+-\\s+ok:boolean\\s+Review it$`));
    t.equal(lines.length, 3);
    t.equal(list.stderr, '', 'the whole list: nothing on stderr');

    const cut = await run(['task', 'list', '--limit', '1']);
    t.equal(cut.code, 0, cut.stderr);
    t.equal(cut.stdout.trimEnd().split('\n').length, 2, 'one task under the header');
    t.match(cut.stdout, ask, 'the oldest');
    t.equal(cut.stderr, 'more tasks wait: raise --limit (at most 1000)\n', 'a cut page says so on stderr');
    const cutJson = await run(['task', 'list', '--limit', '1', '--json']);
    t.equal((JSON.parse(cutJson.stdout) as unknown[]).length, 1, 'stdout stays the JSON list');
    t.match(cutJson.stderr, /more tasks wait/);

    const one = await run(['task', 'list', '--flow', '4d5e6f7a-8b9c-4d0e-9f1a-2b3c4d5e6f7a', '--json']);
    t.equal(one.code, 0);
    const items = JSON.parse(one.stdout) as Array<{ processInstanceId: string; nodeType: string; fields: unknown }>;
    t.same(
      items.map((i) => [i.processInstanceId, i.nodeType, i.fields]),
      [[review, 'userTask', [{ name: 'ok', type: 'boolean' }]]],
    );

    t.equal((await run(['task', 'complete', ask, 'ask', '--set', 'inputValue=3'])).code, 0);
    t.notMatch((await run(['task', 'list'])).stdout, ask, 'answered: no longer listed');

    // Claimed: the list names who in a CLAIMED BY column, show says it, unclaim gives it back.
    const claim = await run(['task', 'claim', review]);
    t.equal(claim.code, 0, claim.stderr);
    t.equal(claim.stdout, `${review} review claimed\n`);
    t.equal((await run(['task', 'claim', review, 'review'])).code, 0, 'claiming it again is no error');
    const claimedList = (await run(['task', 'list'])).stdout.trimEnd().split('\n');
    t.match(claimedList[0], /^ID\s+NODE\s+INPUT\s+FLOW\s+WAITING SINCE\s+DUE\s+CLAIMED BY\s+FIELDS\s+TITLE$/);
    t.match(claimedList[1], new RegExp(`^${review}\\s+review\\s+.*\\s+\\S+\\s+ok:boolean\\s+Review it$`));
    t.match((await run(['task', 'show', review])).stdout, /, claimed by key:\S+\n/, 'show says who claimed it');
    t.equal((await run(['task', 'unclaim', review])).stdout, `${review} review unclaimed\n`);
    t.notMatch((await run(['task', 'list'])).stdout, /CLAIMED BY/, 'given back: no column');

    const unknown = await run(['task', 'list', '--flow', '00000000-0000-4000-8000-000000000000']);
    t.equal(unknown.code, 1, 'an unknown flow: the command failed');
    t.match(unknown.stderr, /^PROCESS_NOT_FOUND: no flow 00000000-0000-4000-8000-000000000000/);
    const bad = await run(['task', 'list', '--limit', 'lots']);
    t.equal(bad.code, 2, 'a bad --limit is a usage error');
    t.match(bad.stderr, /--limit.*must be a whole number from 1 to 1000/);
    t.notMatch(bad.stderr, /\n\s+at /, 'never a stack trace');
  },
);

t.test("wfx task list: an agent's tool task names the agent (AGENT); --json has it as the API gives it", async (t) => {
  const { wfx, startAgent } = await agentDaemon(t, [FOUR_CALLS]);
  const { agentId, waitingId } = await startAgent();
  const list = await wfx(['task', 'list']);
  t.equal(list.code, 0, list.stderr);
  const lines = list.stdout.trimEnd().split('\n');
  t.match(lines[0], /^ID\s+NODE\s+INPUT\s+FLOW\s+WAITING SINCE\s+DUE\s+AGENT\s+FIELDS\s+TITLE$/);
  t.match(
    lines[1],
    new RegExp(
      `^${waitingId}\\s+ask\\s+textbox\\s+Ask a supervisor v1\\s+\\S+\\s+\\S+\\s+Support agent \\(ask_a_supervisor\\)\\s+inputValue:text\\*\\s+Approve: refund 5 EUR$`,
    ),
  );
  const json = JSON.parse((await wfx(['task', 'list', '--json'])).stdout) as Array<{ agent?: unknown }>;
  t.same(json[0]!.agent, {
    processInstanceId: agentId,
    nodeId: 'agent',
    nodeName: 'Support agent',
    tool: 'ask_a_supervisor',
  });
});
