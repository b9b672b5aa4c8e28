import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP server on 127.0.0.1 (port 0) that answers nothing by itself: each request's response
 * is handed to the test (`held`, in order of arrival), and `closed[n]` turns true when the
 * asker went away before response n ended. Closed at teardown.
 */
export async function holdingServer(t: { teardown(fn: () => unknown): void }) {
  const held: ServerResponse[] = [];
  const closed: boolean[] = [];
  const server = createServer((_req, res) => {
    const n = held.push(res) - 1;
    closed[n] = false;
    res.on('close', () => (closed[n] = !res.writableEnded));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, held, closed };
}
