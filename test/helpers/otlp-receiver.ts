import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the receiver keeps it: the OTLP JSON span with its attributes flattened and its resource's service name. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly status: { readonly code?: number; readonly message?: string };
  readonly attributes: Record<string, string | number | boolean>;
  readonly service: string;
  /** The order of the request that brought it (0-based). */
  readonly request: number;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan extends Omit<ReceivedSpan, 'attributes' | 'service' | 'request'> {
  attributes: Array<{ key: string; value: OtlpValue }>;
}
interface OtlpBody {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: OtlpValue }> };
    scopeSpans: Array<{ spans: OtlpSpan[] }>;
  }>;
}

const flat = (attrs: Array<{ key: string; value: OtlpValue }>) =>
  Object.fromEntries(
    attrs.map(({ key, value: v }) => [
      key,
      v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? '')),
    ]),
  );

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A scripted OTLP/HTTP (JSON) trace receiver on loopback, port 0: it keeps every span posted to
 * /v1/traces and the headers of each request; `refuse` makes it answer 503 (a collector down);
 * `script` holds answers to give first, one per request (then it accepts again); `posts` counts
 * every request, answered or refused.
 */
export async function otlpReceiver(t: { teardown(fn: () => unknown): void }) {
  const spans: ReceivedSpan[] = [];
  const headers: Array<Record<string, string | string[] | undefined>> = [];
  let requests = 0;
  const state = {
    refuse: false,
    /** Answers to give first; `reset`: the connection closed instead of an answer. */
    script: [] as Array<{ status: number; retryAfter?: string; reset?: boolean }>,
    posts: 0,
  };
  const server = createServer((req, res) => {
    void bodyOf(req).then((text) => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
      state.posts++;
      if (state.refuse) return void res.writeHead(503).end();
      const scripted = state.script.shift();
      if (scripted?.reset) return void req.socket.destroy();
      if (scripted)
        return void res
          .writeHead(scripted.status, scripted.retryAfter === undefined ? {} : { 'retry-after': scripted.retryAfter })
          .end();
      const n = requests++;
      headers.push(req.headers);
      const body = JSON.parse(text) as OtlpBody;
      for (const rs of body.resourceSpans) {
        const service = String(flat(rs.resource.attributes)['service.name']);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) spans.push({ ...s, attributes: flat(s.attributes), service, request: n });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    headers,
    state,
    /** The spans of execution `id` (its own and its nodes' and their client spans'). */
    of: (id: string) => spans.filter((s) => s.attributes['wfx.execution.id'] === id),
  };
}
