import '../../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t, { type Test } from 'tap';
import { agentDaemon, FOUR_CALLS } from '../../helpers/agent-daemon.js';
import { childTree, type ChildEntry } from '../../../src/client/child-tree.js';
import { WfxClient } from '../../../src/client/client.js';
import { childrenText } from '../../../src/cli/commands/instances.js';
import { adminClient, startDaemon, wfxIn } from '../../helpers/cli.js';
import { stubClient } from '../../helpers/stub-client.js';

const ID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const re = (source: string) => new RegExp(source.replaceAll('ID', ID), 'm');

t.test(
  "wfx instances get: an agent's conversation as a transcript, each tool call with its execution and state",
  async (t) => {
    const longAnswer = `Order A1 has shipped, and the refund was not made. ${'More detail follows here. '.repeat(80)}`;
    const { h, wfx, startAgent } = await agentDaemon(t, [
      FOUR_CALLS,
      { text: longAnswer, usage: { inputTokens: 90, outputTokens: 40 } },
    ]);
    const { agentId, waitingId } = await startAgent();

    const got = await wfx(['instances', 'get', agentId]);
    t.equal(got.code, 0, got.stderr);
    const out = got.stdout;
    t.match(out, re('^agent\\s+callAgent\\s+waiting\\s+tool ask_a_supervisor$'), 'the node table says which tool runs');
    t.match(
      out,
      re(
        '^conversation of Support agent \\(agent\\), waiting\\n1 turn · 30 input \\+ 8 output tokens · 4 tool calls: 1 done, 1 failed, 1 running, 1 refused$',
      ),
    );
    t.match(
      out,
      re('^  system     You help customers\\.\\n  user       Help with order A1\\n  assistant  → look_up_order'),
    );
    t.match(
      out,
      re('^  assistant  → look_up_order\\(orderId: "A1"\\)\\n               done in ID$'),
      'a call, then its state',
    );
    t.match(out, re('^             → refund\\(amount: 5\\)\\n               failed in ID$'));
    t.match(
      out,
      re(`^             → ask_a_supervisor\\(reason: "refund 5 EUR"\\)\\n               running in ${waitingId}$`),
    );
    t.match(
      out,
      re('^             → look_up_order\\(order: "A1"\\)\\n               refused$'),
      'refused: no execution',
    );
    t.match(
      out,
      re('^  tool       ← look_up_order: \\{status: "shipped", orderId: "A1"\\}$'),
      'a result, read as JSON',
    );
    t.match(out, re('^  tool       ← refund: error: NO_BRANCH_MATCHED: '), 'a failed tool: its error');
    t.match(out, re('^  tool       ← look_up_order: error: invalid arguments: arguments.orderId is required'));
    t.ok(out.indexOf('conversation of') < out.indexOf('\nvariables:'), 'between the nodes and the variables');

    const json = JSON.parse((await wfx(['instances', 'get', agentId, '--json'])).stdout) as {
      nodes: Array<{ agent?: { steps: number } }>;
    };
    t.equal(json.nodes.find((n) => n.agent)?.agent?.steps, 1, '--json stays the resource');

    const tool = await wfx(['instances', 'get', waitingId]);
    t.match(tool.stdout, re(`^child of ${agentId}, running its agent's tool call call_1_3$`));
    t.notMatch(tool.stdout, /conversation of/, 'no agent, no conversation');

    t.equal((await wfx(['task', 'complete', waitingId, 'ask', '--set', 'inputValue=yes'])).code, 0);
    await h.waitFor((e) => e.processInstanceId === agentId && e.type === 'PROCESS_COMPLETED');
    const done = (await wfx(['instances', 'get', agentId])).stdout;
    t.match(
      done,
      re(
        '^conversation of Support agent \\(agent\\), completed\\n2 turns · 120 input \\+ 48 output tokens · 4 tool calls: 2 done, 1 failed, 1 refused$',
      ),
    );
    t.match(done, re('^               done in ID$'));
    t.match(done, re('^  tool       ← ask_a_supervisor: \\{approved: "yes"\\}$'));
    t.match(
      done,
      re('^  assistant  Order A1 has shipped, and the refund was not made\\. More detail'),
      'the answer, wrapped',
    );
    t.match(done, re(`^             … ${longAnswer.trim().length - 1500} more characters \\(--json has the whole\\)$`));
    const transcript = done.slice(done.indexOf('conversation of'), done.indexOf('\nvariables:'));
    const wide = transcript.split('\n').filter((l) => l.length > 100);
    t.same(wide, [], 'the transcript fits 100 columns');
  },
);

t.test('childrenText: a tree of nodes and children, what was left out counted', async (t) => {
  const entry = (id: string, more: Partial<ChildEntry> = {}): ChildEntry => ({
    id,
    stateCd: 0,
    processName: 'Flow',
    groups: [],
    unshown: 0,
    ...more,
  });
  t.equal(childrenText([]), '', 'no children, no section');
  const text = childrenText([
    {
      nodeInstanceId: 'n2',
      nodeId: 'agent',
      nodeType: 'callAgent',
      total: 2,
      shown: [
        entry('c1', {
          groups: [
            {
              nodeInstanceId: 'n3',
              nodeId: 'ask',
              nodeType: 'subProcess',
              total: 1,
              shown: [entry('g1', { unshown: 4 })],
            },
          ],
        }),
        entry('c2', { stateCd: null, processName: null }),
      ],
    },
    { nodeInstanceId: 'n4', nodeId: 'pay', nodeType: 'subProcess', total: 1, shown: [entry('c3', { stateCd: 2 })] },
  ]);
  t.equal(
    text,
    [
      '',
      'children:',
      '├─ agent (callAgent): 2 child executions',
      '│  ├─ c1  running  Flow',
      '│  │  └─ ask (subProcess): 1 child execution',
      '│  │     └─ g1  running  Flow',
      '│  │        └─ … 4 more below (wfx instances get g1)',
      '│  └─ c2  (could not be read)',
      '└─ pay (subProcess): 1 child execution',
      '   └─ c3  failed  Flow',
      '',
    ].join('\n'),
  );
});

t.test('childTree: bounded in depth, children per node and reads', async (t) => {
  // A chain: each execution has one child of node `n`, forever; and a loop of 30 at the top.
  const view = (id: string) => ({
    processInstanceId: id,
    processName: `F${id}`,
    stateCd: 0,
    nodes: [{ nodeInstanceId: 'n1', nodeId: 'n', nodeType: 'subProcess', childInstanceIds: [`${id}.1`] }],
  });
  const client = stubClient((call) => view(decodeURIComponent(call.path.split('/').at(-1)!)));
  const top = {
    nodes: [
      {
        nodeInstanceId: 'n1',
        nodeId: 'loop',
        nodeType: 'loopNode',
        childInstanceIds: Array.from({ length: 30 }, (_, i) => `i${i}`),
      },
    ],
  } as never;
  const groups = await childTree(client, top, { depth: 2, perNode: 5, reads: 8 });
  t.equal(groups[0]!.total, 30);
  t.same(
    groups[0]!.shown.map((c) => c.id),
    ['i25', 'i26', 'i27', 'i28', 'i29'],
    'the newest 5',
  );
  t.same(
    groups[0]!.shown[0]!.groups[0]!.shown[0],
    { id: 'i25.1', stateCd: 0, processName: 'Fi25.1', groups: [], unshown: 1 },
    'depth 2: the third level counted, not read',
  );
  t.same(
    groups[0]!.shown.at(-1)!.groups[0]!.shown[0],
    { id: 'i29.1', stateCd: null, processName: null, groups: [], unshown: 0 },
    'past 8 reads: listed by id only',
  );
  t.equal(client.calls.length, 8, 'no more reads than allowed');
});

const LOOP = `processId: 7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d
name: Fifty
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
    collection: "{items}"
    parallel: true
    nodes:
      s: { type: startEvent, next: pack }
      pack:
        type: subProcess
        nodes:
          s2: { type: startEvent, next: e2 }
          e2: { type: endEvent }
        next: e
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;

/** Ends at once (`ok`) or fails at once with NO_BRANCH_MATCHED (anything else). */
const ROUTE = `processId: 2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e
name: Route
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    branches: [{ condition: "\${mode == 'ok'}", next: done }]
  done: { type: endEvent }
`;

const WAITS = `processId: 3c4d5e6f-7a8b-4c9d-8e0f-2a3b4c5d6e7f
name: Waits
nodes:
  start: { type: startEvent, next: route }
  route:
    type: exclusiveGateway
    branches: [{ condition: "\${who == 'person'}", next: ask }]
    default: nap
  ask: { type: inputNode, inputType: textbox, next: done }
  nap: { type: intermediateCatchEvent, eventType: timer, duration: 1d, next: done }
  done: { type: endEvent }
`;

const ORDERS = `processId: 4d5e6f7a-8b9c-4d0e-9f1a-3b4c5d6e7f80
name: Orders
search: { orderId: "{order.id}", customer: "{order.customer}" }
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

t.test('wfx instances against a daemon', async (t) => {
  // One daemon; each test in an organization of its own, whose executions alone its lists show,
  // as a daemon of its own would, with its files in a directory of its own.
  const { url } = await startDaemon(t, { cwd: t.testdir({}) });
  const system = await adminClient(t.testdirName, url);
  let organizations = 0;
  /** A directory of `files` for test `t`, an admin of a new organization, and `wfx` run in-process with its key there. */
  const organization = async (t: Test, files: Record<string, string>) => {
    const cwd = t.testdir(files);
    const { apiKey } = await system.keys.create({
      name: 'admin',
      organization: `runs-${++organizations}`,
      role: 'admin',
    });
    const run = (args: string[]) => wfxIn(['--url', url, '--api-key', apiKey, ...args], { cwd });
    return { run, client: new WfxClient({ url, apiKey, credentialSource: 'test' }) };
  };

  await t.test(
    'a loop of 50 items is one row with 50 children; --all lists them; get shows the tree, grandchildren too',
    async (t) => {
      const { run } = await organization(t, { 'loop.yaml': LOOP });
      const items = Array.from({ length: 50 }, (_, i) => i);
      const started = await run(['run', 'loop.yaml', '--data', JSON.stringify({ items }), '--wait', '--json']);
      t.equal(started.code, 0, started.stderr);
      const parent = (JSON.parse(started.stdout) as { processInstanceId: string }).processInstanceId;
      const pid = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';

      const listed = JSON.parse((await run(['instances', 'list', pid, '--json'])).stdout) as Array<
        Record<string, unknown>
      >;
      t.equal(listed.length, 1, 'one row: the execution, not its iterations');
      t.match(listed[0], { processInstanceId: parent, childCount: 50, parentInstanceId: null });
      const table = (await run(['instances', 'list', pid])).stdout;
      t.match(table, new RegExp(`^${parent}\\s+Fifty\\s+1\\s+completed\\s+\\S+\\s+50\\s*$`, 'm'), 'CHILDREN column');

      const all = JSON.parse(
        (await run(['instances', 'list', pid, '--all', '--limit', '200', '--json'])).stdout,
      ) as Array<{
        parentInstanceId: string | null;
      }>;
      t.equal(all.length, 101, '--all: the iterations and their subprocesses too');
      t.equal(all.filter((i) => i.parentInstanceId === parent).length, 50);

      const got = (await run(['instances', 'get', parent])).stdout;
      const tree = got.slice(got.indexOf('\nchildren:\n') + 1, got.indexOf('\nvariables:'));
      const lines = tree.trimEnd().split('\n');
      t.same(lines.slice(0, 3), [
        'children:',
        '└─ each (loopNode): 50 child executions',
        '   ├─ … 40 more (earlier; --json lists every id)',
      ]);
      const last = (
        JSON.parse((await run(['instances', 'get', parent, '--json'])).stdout) as {
          nodes: Array<{ childInstanceIds?: string[] }>;
        }
      ).nodes
        .find((n) => n.childInstanceIds)!
        .childInstanceIds!.slice(-10);
      const iterations = lines.filter((l) => /^ {3}[├└]─ \S{36} /.test(l));
      t.same(
        iterations.map((l) => l.slice(6, 42)),
        last,
        'the newest 10 iterations, oldest first, by id',
      );
      for (const l of iterations) t.match(l, /^ {3}[├└]─ \S{36}  completed  Fifty$/, 'each with its state and flow');
      // Under each iteration its own child: the subprocess, a grandchild of the execution.
      t.same(
        lines.slice(-3).map((l) => l.replace(/[0-9a-f-]{36}/, 'ID')),
        [
          '   └─ ID  completed  Fifty',
          '      └─ pack (subProcess): 1 child execution',
          '         └─ ID  completed  Fifty',
        ],
      );
      t.equal(lines.filter((l) => l.includes('pack (subProcess)')).length, 10, 'one under each iteration shown');
    },
  );

  await t.test(
    'wfx instances list filters every flow by state, environment, failure code and correlation key',
    async (t) => {
      const { run, client } = await organization(t, { 'route.yaml': ROUTE });
      t.equal((await run(['flow', 'publish', 'route.yaml', '--env', 'PRODUCTION'])).code, 0);
      t.equal(
        (await run(['flow', 'activate', '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e', '1', '--env', 'DEVELOPMENT'])).code,
        0,
      );
      const pid = '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e';
      const ids: Record<string, string> = {};
      for (const [name, mode, correlationKey, environment] of [
        ['ok', 'ok', 'order 1', 'PRODUCTION'],
        ['failed', 'no', 'order 1', 'PRODUCTION'],
        ['failedDev', 'no', 'order 2', 'DEVELOPMENT'],
      ] as const)
        ids[name] = (
          await client.process.start({ processId: pid, data: { mode }, correlationKey, environment })
        ).processInstanceId;
      // Past one page of the route (200): the list pages by itself up to --limit.
      for (let i = 0; i < 210; i++) await client.process.start({ processId: pid, data: { mode: 'ok' } });
      const listed = async (...args: string[]) =>
        (
          JSON.parse((await run(['instances', 'list', ...args, '--json'])).stdout) as Array<{
            processInstanceId: string;
          }>
        ).map((i) => i.processInstanceId);
      t.same(await listed('--state', 'failed'), [ids.failedDev, ids.failed], 'newest first');
      t.same(await listed('--state', 'failed', '--env', 'PRODUCTION'), [ids.failed]);
      t.same(await listed('--error-code', 'NO_BRANCH_MATCHED', '--correlation-key', 'order 2'), [ids.failedDev]);
      t.same(await listed(pid, '--correlation-key', 'order 1'), [ids.failed, ids.ok], 'and one flow');
      t.same(await listed('--error-code', 'HTTP_404'), []);
      t.equal((await listed('--limit', '250')).length, 213, 'every one, in two requests');
      t.equal((await listed('--limit', '205')).length, 205, 'as many as asked');
      const table = (await run(['instances', 'list', '--state', 'failed'])).stdout;
      t.match(table, new RegExp(`^${ids.failed}\\s+Route\\s+1\\s+failed\\s+\\S+\\s+order 1\\s*$`, 'm'));
      const bad = await run(['instances', 'list', '--limit', '0']);
      t.equal(bad.code, 2, '--limit 0 is a usage error');
    },
  );

  await t.test('wfx instances list --waiting: what running executions wait for, in a WAITING column', async (t) => {
    const { run } = await organization(t, { 'waits.yaml': WAITS });
    t.equal((await run(['flow', 'publish', 'waits.yaml'])).code, 0);
    const person = (await run(['run', 'Waits', '--set', 'who=person'])).stdout.trim();
    const timer = (await run(['run', 'Waits', '--set', 'who=clock'])).stdout.trim();
    const only = await run(['instances', 'list', '--waiting', 'person']);
    t.equal(only.code, 0, only.stderr);
    const lines = only.stdout.trimEnd().split('\n');
    t.match(lines[0], /^ID\s+FLOW\s+VERSION\s+STATE\s+WAITING\s+STARTED/);
    t.match(lines[1], new RegExp(`^${person}\\s+Waits\\s+1\\s+running\\s+person at ask\\s`));
    t.equal(lines.length, 2, 'only the one waiting for a person');
    const all = (await run(['instances', 'list', '--waiting', 'any'])).stdout;
    t.match(all, new RegExp(`^${timer}\\s+Waits\\s+1\\s+running\\s+timer at nap\\s`, 'm'));
    const bad = await run(['instances', 'list', '--waiting', 'someone']);
    t.equal(bad.code, 2, 'an unknown choice is a usage error');
  });

  await t.test('wfx instances list --where: the runs with a search attribute, in a SEARCH column', async (t) => {
    const { run } = await organization(t, { 'orders.yaml': ORDERS });
    t.equal((await run(['flow', 'publish', 'orders.yaml'])).code, 0);
    const ids: string[] = [];
    for (const [id, customer] of [
      ['A-1001', 'Ada'],
      ['A-1002', 'Bob'],
      ['A-1003', 'Ada'],
    ])
      ids.push(
        (await run(['run', 'Orders', '--set', `order.id=${id}`, '--set', `order.customer=${customer}`])).stdout.trim(),
      );
    const one = await run(['instances', 'list', '--where', 'orderId=A-1002']);
    t.equal(one.code, 0, one.stderr);
    const lines = one.stdout.trimEnd().split('\n');
    t.match(lines[0], /\sCORRELATION KEY\s+SEARCH$/);
    t.match(lines[1], new RegExp(`^${ids[1]}\\s+Orders\\s+1\\s+running\\s.*orderId=A-1002 customer=Bob$`));
    t.equal(lines.length, 2, 'one run among three');
    const listed = async (...args: string[]) =>
      (
        JSON.parse((await run(['instances', 'list', ...args, '--json'])).stdout) as Array<{ processInstanceId: string }>
      ).map((i) => i.processInstanceId);
    t.same(await listed('--where', 'customer=Ada'), [ids[2], ids[0]], 'newest first');
    t.same(await listed('--where', 'customer=Ada', '--where', 'orderId=A-1001'), [ids[0]], 'each must hold');
    t.same(await listed('--where', 'customer=Eve'), []);
    const got = await run(['instances', 'get', ids[1]!]);
    t.match(got.stdout, /^search: orderId=A-1002 customer=Bob$/m, 'get says them');
    const dry = await run(['instances', 'cancel', '--query', '--where', 'customer=Ada', '--dry-run', '--json']);
    t.equal(dry.code, 0, dry.stderr);
    t.equal((JSON.parse(dry.stdout) as { count: number }).count, 2, 'a bulk query selects by them');
    const bad = await run(['instances', 'list', '--where', 'order id']);
    t.equal(bad.code, 2, 'not name=value: a usage error');
    t.match(bad.stderr, /"order id" is not name=value; e\.g\. --where orderId=A-1002/);
  });
});
