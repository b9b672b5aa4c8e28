import { render } from 'preact-render-to-string';
import t from 'tap';
import { Conversation } from '../../src/console/components/conversation.js';
import { FiltersForm } from '../../src/console/components/filters-form.js';
import { NodePanel } from '../../src/console/components/node-panel.js';
import { StateBadge } from '../../src/console/components/state-badge.js';
import { TaskForm } from '../../src/console/components/task-form.js';
import { Diagram } from '../../src/console/diagram/diagram.js';
import { buildGraph } from '../../src/console/diagram/graph-model.js';
import { FILTER_KEYS } from '../../src/console/model/filters.js';
import type { AgentState } from '../../src/shared/api/process.js';
import { BIG_ORDER, FLOW, ITERATION } from './flow-fixture.js';

const noop = () => undefined;

t.test('the diagram: a button per node and boundary event, named with its state; the path drawn', async (t) => {
  const graph = buildGraph(FLOW.nodes, BIG_ORDER, { lines: { run: ITERATION, opened: {} } });
  const html = render(
    <Diagram graph={graph} hasRun title="Demo" selected={{ scope: [], id: 'route' }} onSelect={noop} onToggle={noop} />,
  );
  t.match(
    html,
    /<div class="diagram-scroll" role="region" aria-label="Diagram of Demo: drag or arrow keys to pan, \+ and − to zoom, 0 to fit" tabindex="0">/,
  );
  t.match(html, /role="toolbar" aria-label="Zoom the diagram of Demo"/, 'its zoom buttons');
  t.match(html, /<svg[^>]*role="group"[^>]*aria-label="Nodes of Demo"/);
  t.match(html, /aria-label="Big order\?, exclusiveGateway, completed"/);
  t.match(html, /aria-label="Price each line, 3 iterations, loopNode, completed"/, 'an opened loop');
  t.match(html, /aria-label="Approve, cancelled, inputNode, timer boundary event Too slow, fired"/);
  t.match(html, /aria-label="Mark small, setVariable, not reached"/);
  t.match(html, /aria-label="Compute price, active, scriptTask"/, "the opened body's node, with the iteration's state");
  t.match(html, /data-node-path="lines.calc"/, 'a body node is addressed inside its container');
  t.match(html, /aria-label="timer boundary event Too slow, fired"/);
  t.match(
    html,
    /aria-label="Close the body of Price each line"[^>]*aria-expanded="true"|aria-expanded="true"[^>]*aria-label="Close the body of Price each line"/,
  );
  t.match(html, /aria-label="Open the body of Check stock"/);
  t.match(html, /class="dnode shape-gateway state-completed visited selected /, 'the selected node');
  t.equal(
    (html.match(/class="dedge kind-[a-zA-Z]+ taken"/g) ?? []).length,
    7,
    'the edges taken (six, and one in the body)',
  );
  t.equal(
    (html.match(/tabindex="0"/g) ?? []).length,
    18,
    'every node, boundary event and +/− is a tab stop, and the pane (to pan and zoom by keyboard)',
  );
  t.match(html, /States:/, 'a legend in words');
  t.notMatch(html, /style=/, 'no inline style');
  const plain = render(
    <Diagram
      graph={buildGraph(FLOW.nodes, null)}
      hasRun={false}
      title="Demo"
      selected={null}
      onSelect={noop}
      onToggle={noop}
    />,
  );
  t.match(plain, /aria-label="Mark small, setVariable"/, 'a definition: no state in the names');
  t.notMatch(plain, /States:/);
});

/** Lower case, words only: how an accessibility check compares a label with the text shown (texts joined as it joins them, without a space). */
const words = (text: string) =>
  text
    .replace(/<[^>]+>/g, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .toLowerCase();

t.test("each node's accessible name starts with the words it shows (label in name)", async (t) => {
  for (const run of [null, BIG_ORDER]) {
    const graph = buildGraph(FLOW.nodes, run, { lines: { run: ITERATION, opened: {} } });
    const html = render(
      <Diagram graph={graph} hasRun={run !== null} title="Demo" selected={null} onSelect={noop} onToggle={noop} />,
    );
    const nodes = [
      ...html.matchAll(
        /<g class="dnode [^"]*"[^>]*aria-label="([^"]*)"[^>]*>([\s\S]*?)(?=<g class="(?:dnode|dtoggle|dboundary) |<\/svg>)/g,
      ),
    ];
    t.equal(nodes.length, 14, 'every node drawn (with the opened body)');
    for (const [, label, inner] of nodes) {
      const shown = words(
        [...inner!.replace(/<title>[\s\S]*?<\/title>/g, '').matchAll(/<text[^>]*>([\s\S]*?)<\/text>/g)]
          .map((m) => m[1])
          .join(' '),
      );
      t.ok(words(label!).startsWith(shown), `"${label}" starts with "${shown}"`);
    }
  }
});

t.test('a state badge says its word beside its icon', async (t) => {
  t.match(
    render(<StateBadge state="FAILED" />),
    /<span class="badge state-failed"><svg[^>]*aria-hidden="true"[\s\S]*<span>failed<\/span>/,
  );
  t.match(render(<StateBadge node="timedOut" />), /state-timedOut[\s\S]*timed out/);
});

t.test("a node's panel: its instances, the branch a gateway took, a boundary event's firing", async (t) => {
  const graph = buildGraph(FLOW.nodes, BIG_ORDER);
  const route = graph.nodes.find((n) => n.id === 'route')!;
  const html = render(
    <NodePanel target={{ kind: 'node', node: route }} graph={graph} run={BIG_ORDER} log={null} onClose={noop} />,
  );
  t.match(html, /<h2 id="node-panel-title"[^>]*>Big order\?<\/h2>/);
  t.match(html, /Took: <code class="branch">total > 100<\/code>/);
  t.match(html, /aria-label="Close the panel of Big order\?"/);
  t.match(html, /<h3>Its instance<\/h3><ol class="instances">[\s\S]*completed/);
  const approve = graph.nodes.find((n) => n.id === 'approve')!;
  const boundary = render(
    <NodePanel
      target={{ kind: 'boundary', boundary: approve.boundaries[0]!, on: approve }}
      graph={graph}
      run={BIG_ORDER}
      log={null}
      onClose={noop}
    />,
  );
  t.match(boundary, /This boundary event fired\./);
  const answered = {
    ...BIG_ORDER,
    nodes: BIG_ORDER.nodes.map((n) =>
      n.nodeId === 'approve' ? { ...n, statusCd: 2 as const, answeredBy: 'key:k-ann', answeredAt: n.endTime! } : n,
    ),
  };
  const answeredGraph = buildGraph(FLOW.nodes, answered);
  const approveHtml = render(
    <NodePanel
      target={{ kind: 'node', node: answeredGraph.nodes.find((n) => n.id === 'approve')! }}
      graph={answeredGraph}
      run={answered}
      log={null}
      onClose={noop}
    />,
  );
  t.match(approveHtml, /<div class="answered">Answered by <code>key:k-ann<\/code> at <time datetime="[^"]+">/);
  t.notMatch(html, /Answered by/, 'a node nobody answered says nothing of it');
  const loop = graph.nodes.find((n) => n.id === 'lines')!;
  const loopHtml = render(
    <NodePanel
      target={{ kind: 'node', node: loop }}
      graph={graph}
      run={BIG_ORDER}
      log={null}
      body={{ shown: 'it-2', choose: noop }}
      onClose={noop}
    />,
  );
  t.match(loopHtml, /Iterations: 3 iterations\./);
  t.match(loopHtml, /<option selected value="it-2">iteration 2<\/option>/, 'the iteration the body shows');
  t.match(loopHtml, /href="\/executions\/it-1" title="it-1">iteration 1</, 'each iteration linked');
});

t.test("a callAgent's conversation links each tool call to the execution that ran it", async (t) => {
  const agent: AgentState = {
    steps: 2,
    usage: { inputTokens: 120, outputTokens: 30 },
    messages: [
      { role: 'user', content: 'Refund order 42' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call-1', name: 'lookup', arguments: '{"order":42}' }] },
      { role: 'tool', toolCallId: 'call-1', name: 'lookup', content: '{"total":10}' },
      { role: 'assistant', content: 'Refunded.' },
    ],
    calls: [
      {
        id: 'call-1',
        name: 'lookup',
        arguments: '{"order":42}',
        processId: 'p',
        step: 1,
        childInstanceId: 'child-9',
        ok: true,
      },
    ],
  };
  const html = render(<Conversation agent={agent} />);
  t.match(html, /2 model turns, 120 tokens in, 30 out/);
  t.equal((html.match(/href="\/executions\/child-9"/g) ?? []).length, 2, 'from the call and from its result');
  t.match(html, /tool result: lookup/);
  t.match(html, /state-completed[\s\S]*done/);
});

t.test('the filters form names each field as its query parameter, filled from the filters', async (t) => {
  const html = render(
    <FiltersForm
      filters={{ state: 'FAILED', correlationKey: 'k1' }}
      flows={[{ processId: 'orders', name: 'Orders' }]}
      onApply={noop}
    />,
  );
  for (const key of FILTER_KEYS) t.match(html, new RegExp(`name="${key}"`), key);
  t.match(html, /role="search"/);
  t.match(html, /<option selected value="FAILED">failed<\/option>/);
  t.match(html, /name="correlationKey"[^>]*value="k1"|value="k1"[^>]*name="correlationKey"/);
  t.match(html, /<option value="orders">Orders<\/option>/);
  t.match(html, /href="\/executions"[^>]*>Clear/, 'clearing is a link to the list');
});

t.test(
  "the task form of an agent's approval: the tool, its server, the model's words, the arguments to edit",
  async (t) => {
    const html = render(
      <TaskForm
        processInstanceId="p1"
        organization="default"
        nodeId="agent"
        nodeName="Mailer"
        spec={{
          inputType: 'form',
          formTitle: 'Approve the call of send_email',
          options: null,
          fields: [
            {
              name: 'arguments',
              type: 'text',
              label: 'Arguments (JSON): edit them to change the call',
              default: '{\n  "to": "ada@example.com"\n}',
            },
          ],
          approval: {
            callId: 'c1',
            tool: 'send_email',
            arguments: { to: 'ada@example.com' },
            reasoning: 'I will email Ada first.',
            server: 'https://mail.example.com/mcp',
          },
        }}
        mayExecute
        idBase="t1"
      />,
    );
    t.match(
      html,
      /The agent asks to call <strong>send_email<\/strong> on the MCP server https:\/\/mail\.example\.com\/mcp\./,
    );
    t.match(html, /<blockquote class="reasoning">I will email Ada first\.<\/blockquote>/);
    t.match(html, /Arguments \(JSON\): edit them to change the call/);
    t.match(html, /ada@example\.com/, 'the arguments, to edit');
  },
);
