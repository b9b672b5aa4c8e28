import t from 'tap';
import type { Role } from '../../../src/daemon/state/state.js';
import { apiHarness, type ApiHarness, type TestKey } from '../../helpers/api.js';

const FLOW = `processId: AUTO
name: Wait
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

type Actor = 'viewer' | 'operator' | 'developer' | 'admin' | 'otherAdmin' | 'systemAdmin' | 'systemViewer';

/** Expected status per actor, in the order of ACTORS. */
const ACTORS: Actor[] = ['viewer', 'operator', 'developer', 'admin', 'otherAdmin', 'systemAdmin', 'systemViewer'];

interface Row {
  readonly name: string;
  /** Builds the request for one actor (fresh executions where a call consumes one). */
  readonly request: (h: ApiHarness, ctx: Ctx, actor: Actor) => Promise<{ method: 'GET' | 'POST'; url: string; payload?: object }>;
  readonly expect: Record<Actor, number>;
}

interface Ctx {
  processId: string;
  waiting: () => Promise<string>;
}

const row = (expect: number[]): Record<Actor, number> => Object.fromEntries(ACTORS.map((a, i) => [a, expect[i]!])) as Record<Actor, number>;

const ROWS: Row[] = [
  { name: 'GET /process/list', request: async () => ({ method: 'GET', url: '/process/list' }), expect: row([200, 200, 200, 200, 200, 200, 200]) },
  { name: 'GET /auth/whoami', request: async () => ({ method: 'GET', url: '/auth/whoami' }), expect: row([200, 200, 200, 200, 200, 200, 200]) },
  {
    name: 'GET /process/instance/{id}',
    request: async (_h, c) => ({ method: 'GET', url: `/process/instance/${await c.waiting()}` }),
    expect: row([200, 200, 200, 200, 404, 200, 200]),
  },
  {
    name: 'GET /process/{id}/instances',
    request: async (_h, c) => ({ method: 'GET', url: `/process/${c.processId}/instances` }),
    expect: row([200, 200, 200, 200, 404, 200, 200]),
  },
  {
    name: 'POST /process/exec',
    request: async (_h, c) => ({ method: 'POST', url: '/process/exec', payload: { processId: c.processId } }),
    expect: row([403, 200, 200, 200, 404, 403, 403]),
  },
  {
    name: 'POST /process/start',
    request: async (_h, c) => ({ method: 'POST', url: '/process/start', payload: { processId: c.processId } }),
    expect: row([403, 403, 403, 403, 403, 200, 403]),
  },
  {
    name: 'POST /process/task',
    request: async (_h, c) => ({ method: 'POST', url: '/process/task', payload: { processInstanceId: await c.waiting(), nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'x' } } }),
    expect: row([403, 200, 200, 200, 404, 200, 403]),
  },
  {
    name: 'POST /process/instance/{id}/cancel',
    request: async (_h, c) => ({ method: 'POST', url: `/process/instance/${await c.waiting()}/cancel` }),
    expect: row([403, 200, 200, 200, 404, 200, 403]),
  },
  {
    name: 'POST /process/event',
    request: async () => ({ method: 'POST', url: '/process/event', payload: { eventType: 'e', correlationKey: 'k', ttlSeconds: 60 } }),
    expect: row([403, 200, 200, 200, 200, 200, 403]),
  },
  {
    // A system key publishes into `default` unless it names an organization: acme's processId conflicts.
    name: 'POST /admin/flows (republish)',
    request: async (h, c) => ({ method: 'POST', url: '/admin/flows', payload: { definition: h.store.state.flows[c.processId]!.versions['1']!.definition } }),
    expect: row([403, 403, 200, 200, 409, 409, 403]),
  },
  {
    name: 'POST /admin/flows (republish, naming the organization)',
    request: async (h, c) => ({ method: 'POST', url: '/admin/flows', payload: { organization: 'acme', definition: h.store.state.flows[c.processId]!.versions['1']!.definition } }),
    expect: row([403, 403, 200, 200, 403, 200, 403]),
  },
  { name: 'GET /admin/flows', request: async () => ({ method: 'GET', url: '/admin/flows' }), expect: row([200, 200, 200, 200, 200, 200, 200]) },
  { name: 'GET /admin/api-keys', request: async () => ({ method: 'GET', url: '/admin/api-keys' }), expect: row([403, 403, 403, 200, 200, 200, 403]) },
  {
    name: 'POST /admin/api-keys',
    request: async () => ({ method: 'POST', url: '/admin/api-keys', payload: { name: 'made', role: 'viewer' } }),
    expect: row([403, 403, 403, 201, 201, 201, 403]),
  },
  {
    name: 'GET /admin/environments/PRODUCTION/variables',
    request: async () => ({ method: 'GET', url: '/admin/environments/PRODUCTION/variables' }),
    expect: row([403, 403, 403, 200, 200, 200, 403]),
  },
];

t.test('permission matrix: each role x each endpoint x own org / other org / system key', async (t) => {
  const h = await apiHarness(t);
  const keys = {} as Record<Actor, TestKey>;
  for (const role of ['viewer', 'operator', 'developer', 'admin'] as Role[]) keys[role as Actor] = await h.key(role, 'acme');
  keys.otherAdmin = await h.key('admin', 'globex');
  keys.systemAdmin = await h.key('admin', null);
  keys.systemViewer = await h.key('viewer', null);
  const processId = await h.publish(FLOW, { organization: 'acme' });
  const ctx: Ctx = {
    processId,
    waiting: async () => (await h.engine.start({ processId, organization: 'acme' })).processInstanceId,
  };
  const failures: string[] = [];
  for (const r of ROWS) {
    for (const actor of ACTORS) {
      const req = await r.request(h, ctx, actor);
      const res = await h.call(keys[actor], req);
      if (res.statusCode !== r.expect[actor]) failures.push(`${r.name} as ${actor}: ${res.statusCode} ${res.body.slice(0, 120)} (expected ${r.expect[actor]})`);
      else if (res.statusCode >= 400) t.ok(['FORBIDDEN', 'INSTANCE_NOT_FOUND', 'PROCESS_NOT_FOUND', 'PROCESS_ID_CONFLICT'].includes(res.json().error), `${r.name} as ${actor}: ${res.json().error}`);
    }
    const anonymous = await h.call(null, await r.request(h, ctx, 'admin'));
    if (anonymous.statusCode !== 401 || anonymous.json().error !== 'UNAUTHORIZED') failures.push(`${r.name} without credential: ${anonymous.statusCode}`);
  }
  t.same(failures, [], 'every cell as expected');
});

t.test('another organization\'s flows and executions are 404, never 403; lists leave them out', async (t) => {
  const h = await apiHarness(t);
  const acme = await h.key('admin', 'acme');
  const globex = await h.key('admin', 'globex');
  const pid = await h.publish(FLOW, { organization: 'acme' });
  const inst = await h.engine.start({ processId: pid, organization: 'acme' });
  for (const url of [`/process/instance/${inst.processInstanceId}`, `/process/instance/${inst.processInstanceId}/logs`, `/process/${pid}/instances`, `/admin/flows/${pid}`]) {
    const res = await h.call(globex, { method: 'GET', url });
    t.equal(res.statusCode, 404, url);
  }
  t.same((await h.call(globex, { method: 'GET', url: '/process/list' })).json().items, []);
  t.equal((await h.call(acme, { method: 'GET', url: '/process/list' })).json().items.length, 1);
});
