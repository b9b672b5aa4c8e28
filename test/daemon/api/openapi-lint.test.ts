import { createConfig, lintFromString } from '@redocly/openapi-core';
import t from 'tap';
import { apiHarness } from '../../helpers/api.js';

/*
 * The contract the daemon serves (/openapi.json), read by a real linter: Redocly's recommended
 * rules, as client generators and API tooling read it. No error may stand; every operation has
 * an operationId (what generators name their methods by).
 */

t.test("/openapi.json passes Redocly's recommended rules with no error", async (t) => {
  const h = await apiHarness(t);
  const res = await h.call(null, { method: 'GET', url: '/openapi.json' });
  t.equal(res.statusCode, 200);
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: res.body, absoluteRef: '/openapi.json', config });
  const errors = problems.filter((p) => p.severity === 'error');
  t.same(
    errors.map((p) => `${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? ''})`),
    [],
    `no error (${problems.length - errors.length} warnings)`,
  );
  // What stands: two path templates the SPEC fixes that a router could read alike
  // (`/process/bulk/{bulkId}` and `/process/{id}/instances`); Fastify tells them apart.
  t.same(
    problems.filter((p) => p.ruleId !== 'no-ambiguous-paths').map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`),
    [],
    'and no warning but the ambiguous paths',
  );
});

t.test('/openapi.json: every operation has an operationId, none twice', async (t) => {
  const h = await apiHarness(t);
  const doc = (await h.call(null, { method: 'GET', url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  const ids: string[] = [];
  const missing: string[] = [];
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) {
      if (op.operationId) ids.push(op.operationId);
      else missing.push(`${method.toUpperCase()} ${path}`);
    }
  t.same(missing, [], 'none without one');
  t.equal(new Set(ids).size, ids.length, `no operationId twice (${ids.length})`);
  t.ok(ids.length > 50, 'every operation read');
});
