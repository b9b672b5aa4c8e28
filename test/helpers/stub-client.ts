import { WfxClient } from '../../src/client/client.js';
import { ApiClient } from '../../src/client/http.js';

/** A request the stub was asked. */
export interface StubCall {
  readonly method: string;
  readonly path: string;
  readonly body: unknown;
}

/**
 * A WfxClient that never touches the network: `answer` gives each request's answer (or throws
 * the error the API would, e.g. a WfxError). Streams end at once. Every call is recorded.
 */
export function stubClient(answer: (call: StubCall) => unknown): WfxClient & { readonly calls: StubCall[] } {
  const calls: StubCall[] = [];
  class Stub extends ApiClient {
    override async request<T>(method: string, path: string, body?: unknown): Promise<T> {
      const call = { method, path, body };
      calls.push(call);
      return (await answer(call)) as T;
    }
    // eslint-disable-next-line require-yield
    override async *stream(): AsyncGenerator<never> {
      return;
    }
  }
  return Object.assign(
    new WfxClient(new Stub({ url: 'http://stub.invalid', apiKey: null, credentialSource: 'test' })),
    { calls },
  );
}
