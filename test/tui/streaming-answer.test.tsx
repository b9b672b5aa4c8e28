import t from 'tap';
import { WfxClient } from '../../src/client/client.js';
import { ApiClient } from '../../src/client/http.js';
import type { SseEvent } from '../../src/shared/sse.js';
import { ExecutionView } from '../../src/tui/components/execution-view.js';
import { useExecution } from '../../src/tui/hooks/use-execution.js';
import type { Execution } from '../../src/tui/types.js';
import { frameMatching, renderAt } from '../helpers/ink.js';
import { finishedInstance } from '../helpers/log-stream-server.js';

const ID = '01a1fe30-edc6-7617-bd1f-84feb7474dfd';
const NOW = new Date('2026-11-21T10:00:05.000Z');
const RUNNING: Execution = { ...finishedInstance(ID), stateCd: 0, endTime: null };

/**
 * A client whose log stream yields what the test pushes, when it pushes it (the daemon's SSE as
 * the hook reads it); GET of the execution answers RUNNING.
 */
function pushedClient() {
  const queue: SseEvent[] = [];
  let wake: (() => void) | null = null;
  class Pushed extends ApiClient {
    override async request<T>(): Promise<T> {
      return RUNNING as T;
    }
    override async *stream(): AsyncGenerator<SseEvent> {
      for (let i = 0; i < 1000; i++) {
        while (queue.length === 0) await new Promise<void>((r) => (wake = r));
        const ev = queue.shift()!;
        yield ev;
        if (ev.event === 'end') return;
      }
    }
  }
  let n = 0;
  const push = (ev: SseEvent) => {
    queue.push(ev);
    wake?.();
    wake = null;
  };
  return {
    client: new WfxClient(new Pushed({ url: 'http://stub.invalid', apiKey: null, credentialSource: 'test' })),
    entry: (nodeId: string, message: string) =>
      push({
        id: String(++n),
        data: JSON.stringify({
          nodeId,
          nodeName: nodeId,
          nodeType: 'aiTask',
          message,
          level: 'INFO',
          timestamp: NOW.toISOString(),
        }),
      }),
    progress: (nodeId: string, delta: string, nodeInstanceId = 'n2') =>
      push({ event: 'progress', data: JSON.stringify({ nodeId, nodeInstanceId, delta }) }),
  };
}

function Live({ client }: { readonly client: WfxClient }) {
  const { execution, logs, streaming } = useExecution(client, ID);
  return execution ? (
    <ExecutionView execution={execution} logs={logs} streaming={streaming} now={NOW} logRows={6} width={100} />
  ) : null;
}

t.test('the execution view shows a streaming answer growing, replaced by the log line when it comes', async (t) => {
  const s = pushedClient();
  const ui = renderAt(<Live client={s.client} />, 100);
  t.teardown(ui.unmount);
  s.entry('classify', 'started');
  await frameMatching(ui.lastFrame, /classify: started/);
  s.progress('classify', 'The ticket is');
  await frameMatching(ui.lastFrame, /classify ▍ The ticket is$/m);
  s.progress('classify', ' about\nbilling');
  const grown = await frameMatching(ui.lastFrame, /classify ▍ The ticket is about billing$/m);
  t.match(grown, /INFO  classify: started\n.*classify ▍/s, 'below the log lines');
  s.entry('classify', 'attempt 1: model m, 12+5 tokens, stop');
  const replaced = await frameMatching(ui.lastFrame, /attempt 1: model m/);
  t.notMatch(replaced, /▍/, 'the durable line took its place');
  t.notMatch(replaced, /about billing/);
});

t.test('a long answer shows its end; two nodes streaming get a line each', async (t) => {
  const ui = renderAt(
    <ExecutionView
      execution={RUNNING}
      logs={[]}
      streaming={[
        { nodeInstanceId: 'a', nodeId: 'draft', text: `${'word '.repeat(40)}the end` },
        { nodeInstanceId: 'b', nodeId: 'summary', text: 'short' },
      ]}
      now={NOW}
      logRows={5}
      width={60}
    />,
    60,
  );
  t.teardown(ui.unmount);
  const frame = ui.lastFrame();
  t.match(frame, /….*word the end$/m, 'cut from the start');
  t.match(frame, /^summary ▍ short$/m);
  t.notOk(frame.split('\n').some((l) => l.length > 60));
});

t.test("the header says the execution's model usage", async (t) => {
  const ui = renderAt(<ExecutionView execution={RUNNING} logs={[]} now={NOW} logRows={5} width={100} />, 100);
  t.teardown(ui.unmount);
  t.match(ui.lastFrame(), /model usage 1 call, 12 input \+ 5 output tokens/);
  const none = renderAt(
    <ExecutionView execution={{ ...RUNNING, usage: undefined }} logs={[]} now={NOW} logRows={5} width={100} />,
    100,
  );
  t.teardown(none.unmount);
  t.notMatch(none.lastFrame(), /model usage/);
});
