/** A chat webhook on loopback for the execution-trigger tests: keeps the JSON body of each POST. */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/** Starts the server (closed at teardown); `posts` grows with each POST's body, in order. */
export async function chatServer(t: Test): Promise<{ url: string; posts: Array<Record<string, unknown>> }> {
  const posts: Array<Record<string, unknown>> = [];
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST')
        posts.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  t.teardown(() => srv.close());
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hooks/chat`, posts };
}
