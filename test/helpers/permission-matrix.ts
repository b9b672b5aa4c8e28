/**
 * The permission matrix of the API (SPEC.md sections 5 and 6): each endpoint x each kind of
 * caller, with the status each must get. Shared by the in-process test and the end-to-end test
 * against a started daemon, so both check the same table.
 */

export type Actor =
  'viewer' | 'operator' | 'developer' | 'admin' | 'otherAdmin' | 'systemAdmin' | 'systemViewer' | 'worker';
export const ACTORS: Actor[] = [
  'viewer',
  'operator',
  'developer',
  'admin',
  'otherAdmin',
  'systemAdmin',
  'systemViewer',
  'worker',
];

/**
 * What a row needs: the flow under test (owned by organization acme, which also has the
 * domain MATRIX_DOMAIN registered) and fresh waiting executions.
 */
export interface MatrixContext {
  readonly processId: string;
  readonly definition: object;
  /** A new execution of the flow, waiting at node `ask`. */
  waiting(): Promise<string>;
}

export interface MatrixRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly url: string;
  readonly payload?: object;
}

export interface MatrixRow {
  readonly name: string;
  readonly request: (c: MatrixContext) => Promise<MatrixRequest>;
  readonly expect: Record<Actor, number>;
}

/** The flow the matrix runs: it waits at `ask`. */
export const MATRIX_FLOW = `processId: 6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d
name: Matrix
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done }
  done: { type: endEvent }
`;

/** The domain every matrix context registers in acme (PUT /admin/domains/billing). */
export const MATRIX_DOMAIN = { actions: { charge: { input: { type: 'object' } } } };

/** A row's statuses; the worker role's is 403 unless given (it may only use the jobs API). */
const row = (expect: number[]): Record<Actor, number> =>
  Object.fromEntries(ACTORS.map((a, i) => [a, expect[i] ?? 403])) as Record<Actor, number>;

const NO_JOB = '00000000-0000-4000-8000-000000000000.n1';

//                                                   viewer op   dev  admin other sysAdm sysView worker
export const MATRIX: MatrixRow[] = [
  {
    name: 'GET /process/list',
    request: async () => ({ method: 'GET', url: '/process/list' }),
    expect: row([200, 200, 200, 200, 200, 200, 200, 200]),
  },
  {
    name: 'GET /auth/whoami',
    request: async () => ({ method: 'GET', url: '/auth/whoami' }),
    expect: row([200, 200, 200, 200, 200, 200, 200, 200]),
  },
  {
    name: 'GET /process/instance/{id}',
    request: async (c) => ({ method: 'GET', url: `/process/instance/${await c.waiting()}` }),
    expect: row([200, 200, 200, 200, 404, 200, 200]),
  },
  {
    name: 'GET /process/{id}/instances',
    request: async (c) => ({ method: 'GET', url: `/process/${c.processId}/instances` }),
    expect: row([200, 200, 200, 200, 404, 200, 200]),
  },
  {
    name: 'GET /process/instances',
    request: async () => ({ method: 'GET', url: '/process/instances' }),
    expect: row([200, 200, 200, 200, 200, 200, 200]),
  },
  {
    name: 'GET /process/instances?organization=acme',
    request: async () => ({ method: 'GET', url: '/process/instances?organization=acme' }),
    expect: row([200, 200, 200, 200, 403, 200, 200]),
  },
  {
    name: 'GET /process/tasks',
    request: async () => ({ method: 'GET', url: '/process/tasks' }),
    expect: row([200, 200, 200, 200, 200, 200, 200]),
  },
  {
    name: 'GET /process/tasks?organization=acme',
    request: async () => ({ method: 'GET', url: '/process/tasks?organization=acme' }),
    expect: row([200, 200, 200, 200, 403, 200, 200]),
  },
  {
    name: 'POST /process/exec',
    request: async (c) => ({ method: 'POST', url: '/process/exec', payload: { processId: c.processId } }),
    expect: row([403, 200, 200, 200, 404, 403, 403]),
  },
  {
    name: 'POST /process/start',
    request: async (c) => ({ method: 'POST', url: '/process/start', payload: { processId: c.processId } }),
    expect: row([403, 403, 403, 403, 403, 200, 403]),
  },
  {
    name: 'POST /process/task',
    request: async (c) => ({
      method: 'POST',
      url: '/process/task',
      payload: { processInstanceId: await c.waiting(), nodeId: 'ask', action: 'COMPLETE', data: { inputValue: 'x' } },
    }),
    expect: row([403, 200, 200, 200, 404, 200, 403]),
  },
  {
    name: 'POST /process/instance/{id}/cancel',
    request: async (c) => ({ method: 'POST', url: `/process/instance/${await c.waiting()}/cancel` }),
    expect: row([403, 200, 200, 200, 404, 200, 403]),
  },
  {
    name: 'POST /process/instance/{id}/move (dry run)',
    request: async (c) => ({
      method: 'POST',
      url: `/process/instance/${await c.waiting()}/move`,
      payload: { version: '1', dryRun: true },
    }),
    expect: row([403, 403, 200, 200, 404, 200, 403]),
  },
  {
    name: 'POST /process/event',
    request: async () => ({
      method: 'POST',
      url: '/process/event',
      payload: { eventType: 'e', correlationKey: 'k', ttlSeconds: 60 },
    }),
    expect: row([403, 200, 200, 200, 200, 200, 403]),
  },
  // Bulk operations: created and cancelled with WORKFLOW_PUBLISH, read with WORKFLOW_READ.
  {
    name: 'POST /process/bulk (dry run)',
    request: async (c) => ({
      method: 'POST',
      url: '/process/bulk',
      payload: { operation: 'cancel', query: { processId: c.processId }, dryRun: true },
    }),
    expect: row([403, 403, 200, 200, 404, 200, 403]),
  },
  {
    name: 'GET /process/bulk',
    request: async () => ({ method: 'GET', url: '/process/bulk' }),
    expect: row([200, 200, 200, 200, 200, 200, 200]),
  },
  // A system key publishes into `default` unless it names an organization: acme's processId conflicts.
  {
    name: 'POST /admin/flows (republish)',
    request: async (c) => ({ method: 'POST', url: '/admin/flows', payload: { definition: c.definition } }),
    expect: row([403, 403, 200, 200, 409, 409, 403]),
  },
  {
    name: 'POST /admin/flows (republish, naming the organization)',
    request: async (c) => ({
      method: 'POST',
      url: '/admin/flows',
      payload: { organization: 'acme', definition: c.definition },
    }),
    expect: row([403, 403, 200, 200, 403, 200, 403]),
  },
  {
    name: 'GET /admin/flows',
    request: async () => ({ method: 'GET', url: '/admin/flows' }),
    expect: row([200, 200, 200, 200, 200, 200, 200]),
  },
  {
    name: 'GET /admin/api-keys',
    request: async () => ({ method: 'GET', url: '/admin/api-keys' }),
    expect: row([403, 403, 403, 200, 200, 200, 403]),
  },
  {
    name: 'POST /admin/api-keys',
    request: async () => ({ method: 'POST', url: '/admin/api-keys', payload: { name: 'made', role: 'viewer' } }),
    expect: row([403, 403, 403, 201, 201, 201, 403]),
  },
  {
    name: 'GET /admin/webhooks',
    request: async () => ({ method: 'GET', url: '/admin/webhooks' }),
    expect: row([403, 403, 403, 200, 200, 200, 403]),
  },
  {
    name: 'GET /admin/email-connections',
    request: async () => ({ method: 'GET', url: '/admin/email-connections' }),
    expect: row([403, 403, 403, 200, 200, 200, 403]),
  },
  {
    name: 'GET /admin/ai-providers',
    request: async () => ({ method: 'GET', url: '/admin/ai-providers' }),
    expect: row([403, 403, 403, 200, 200, 200, 403]),
  },
  {
    name: 'GET /admin/memory',
    request: async () => ({ method: 'GET', url: '/admin/memory' }),
    expect: row([403, 403, 403, 200, 200, 200, 403]),
  },
  {
    name: 'GET /admin/environments/PRODUCTION/variables',
    request: async () => ({ method: 'GET', url: '/admin/environments/PRODUCTION/variables' }),
    expect: row([403, 403, 403, 200, 200, 200, 403]),
  },
  {
    name: 'POST /jobs/activate (in acme)',
    request: async () => ({
      method: 'POST',
      url: '/jobs/activate',
      payload: { domain: 'billing', worker: 'w', requestTimeout: 0, organization: 'acme' },
    }),
    expect: row([403, 403, 403, 200, 403, 200, 403, 200]),
  },
  {
    name: 'POST /jobs/{key}/complete (no such job)',
    request: async () => ({ method: 'POST', url: `/jobs/${NO_JOB}/complete`, payload: { worker: 'w' } }),
    expect: row([403, 403, 403, 404, 404, 404, 403, 404]),
  },
  {
    name: 'POST /jobs/complete (no such job: refused per job)',
    request: async () => ({ method: 'POST', url: '/jobs/complete', payload: { worker: 'w', jobs: [{ key: NO_JOB }] } }),
    expect: row([403, 403, 403, 200, 200, 200, 403, 200]),
  },
  {
    name: 'GET /jobs',
    request: async () => ({ method: 'GET', url: '/jobs' }),
    expect: row([200, 200, 200, 200, 200, 200, 200, 403]),
  },
  {
    name: 'GET /jobs/workers',
    request: async () => ({ method: 'GET', url: '/jobs/workers' }),
    expect: row([200, 200, 200, 200, 200, 200, 200, 403]),
  },
  {
    name: 'GET /admin/domains/billing (of acme)',
    request: async () => ({ method: 'GET', url: '/admin/domains/billing?organization=acme' }),
    expect: row([200, 200, 200, 200, 403, 200, 200, 403]),
  },
  {
    name: 'PUT /admin/domains/billing (in acme)',
    request: async () => ({ method: 'PUT', url: '/admin/domains/billing?organization=acme', payload: MATRIX_DOMAIN }),
    expect: row([403, 403, 200, 200, 403, 200, 403, 403]),
  },
];

/** Error codes a refused cell may answer with. */
export const REFUSAL_CODES = [
  'FORBIDDEN',
  'INSTANCE_NOT_FOUND',
  'PROCESS_NOT_FOUND',
  'PROCESS_ID_CONFLICT',
  'JOB_NOT_FOUND',
];

/**
 * Runs every cell with `call` (status and body of one request as one actor, or none) and
 * returns the cells that did not answer as expected, and also checks that every row refuses
 * a request without credential with 401.
 */
export async function runMatrix(
  ctx: MatrixContext,
  call: (actor: Actor | null, req: MatrixRequest) => Promise<{ status: number; body: { error?: string } }>,
): Promise<string[]> {
  const failures: string[] = [];
  for (const r of MATRIX) {
    for (const actor of ACTORS) {
      const res = await call(actor, await r.request(ctx));
      if (res.status !== r.expect[actor])
        failures.push(
          `${r.name} as ${actor}: ${res.status} ${JSON.stringify(res.body).slice(0, 120)} (expected ${r.expect[actor]})`,
        );
      else if (res.status >= 400 && !REFUSAL_CODES.includes(res.body.error ?? ''))
        failures.push(`${r.name} as ${actor}: unexpected code ${res.body.error}`);
    }
    const anonymous = await call(null, await r.request(ctx));
    if (anonymous.status !== 401 || anonymous.body.error !== 'UNAUTHORIZED')
      failures.push(`${r.name} without credential: ${anonymous.status}`);
  }
  return failures;
}
