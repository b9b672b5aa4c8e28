import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import type { InstanceView, LogEntry, LogProgress } from '../../src/shared/api/index.js';

/** One event the fixture streams: a log entry (numbered from 1), a progress piece, or the end. */
export type ScriptedEvent =
  | { readonly entry: Partial<LogEntry> & Pick<LogEntry, 'nodeId' | 'message'> }
  | { readonly progress: LogProgress }
  | { readonly end: true };

/** A finished execution as GET /process/instance/{id} answers it. */
export function finishedInstance(id: string): InstanceView {
  return {
    processInstanceId: id,
    processId: '7b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
    processName: 'Triage',
    processVersion: '1',
    stateCd: 1,
    state: 'COMPLETED',
    startTime: '2026-11-21T10:00:00.000Z',
    endTime: '2026-11-21T10:00:02.000Z',
    correlationKey: null,
    organization: 'default',
    data: {},
    output: null,
    parentInstanceId: null,
    environment: 'PRODUCTION',
    nodes: [],
    usage: { inputTokens: 12, outputTokens: 5, calls: 1 },
  };
}

/**
 * A stand-in daemon on 127.0.0.1 (port 0) for the execution log stream: GET
 * /process/instance/{id}/logs sends `script` as the daemon would (entries with ids, `event:
 * progress` without, `event: end`), each event in its own write and the data of each progress
 * split across two writes, as a network may deliver them; GET /process/instance/{id} answers a
 * finished execution. For the readers of progress events while the engine side that sends them
 * is elsewhere. Closed at teardown.
 */
export async function logStreamServer(t: Test, script: readonly ScriptedEvent[]): Promise<{ url: string }> {
  const server = createServer((req, res) => {
    const logs = /^\/process\/instance\/([^/?]+)\/logs/.exec(req.url ?? '');
    const instance = /^\/process\/instance\/([^/?]+)$/.exec((req.url ?? '').split('?')[0]!);
    if (logs) return void stream(res, decodeURIComponent(logs[1]!), script);
    if (instance) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(finishedInstance(decodeURIComponent(instance[1]!))));
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: 'NOT_FOUND', message: `no route ${req.url}`, timestamp: new Date().toISOString() }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function stream(res: ServerResponse, id: string, script: readonly ScriptedEvent[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const write = (text: string) => new Promise<void>((resolve) => res.write(text, () => resolve()));
  await write('retry: 3000\n\n');
  let n = 0;
  for (const ev of script) {
    if ('entry' in ev) {
      const entry: LogEntry = {
        nodeName: ev.entry.nodeId,
        nodeType: ev.entry.nodeId === '' ? 'process' : 'aiTask',
        level: 'INFO',
        timestamp: '2026-11-21T10:00:01.000Z',
        ...ev.entry,
      };
      await write(`id: ${++n}\ndata: ${JSON.stringify(entry)}\n\n`);
    } else if ('progress' in ev) {
      const text = `event: progress\ndata: ${JSON.stringify(ev.progress)}\n\n`;
      const cut = Math.floor(text.length / 2);
      await write(text.slice(0, cut));
      await write(text.slice(cut));
    } else {
      await write(`event: end\ndata: ${JSON.stringify({ processInstanceId: id })}\n\n`);
    }
  }
  res.end();
}
