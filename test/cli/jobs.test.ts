import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { apiHarness } from '../helpers/api.js';
import { wfxIn } from '../helpers/cli.js';
import { chargeFlow } from '../helpers/jobs.js';

const DOMAIN_FILE = `description: Payments
actions:
  charge:
    input: { type: object, required: [amount], properties: { amount: { type: number } } }
    output: { type: object, required: [receipt] }
`;

t.test('wfx domains register, list, show; wfx jobs list; a bad domain file is a usage error', async (t) => {
  const h = await apiHarness(t);
  const admin = await h.key('admin', 'default');
  const url = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const cwd = t.testdir({ 'billing.domain.yaml': DOMAIN_FILE, 'broken.yaml': '[1, 2' });
  const wfx = (...args: string[]) => wfxIn(['--url', url, '--api-key', admin.apiKey, ...args], { cwd });

  const reg = await wfx('domains', 'register', 'billing', '--file', 'billing.domain.yaml');
  t.equal(reg.code, 0, reg.stderr);
  t.match(reg.stdout, /domain billing registered in default: charge/);
  t.match(
    (await wfx('domains', 'list')).stdout,
    /DOMAIN\s+ORGANIZATION\s+ACTIONS\s+UPDATED\nbilling\s+default\s+charge\s/,
  );
  t.match((await wfx('domains', 'show', 'billing')).stdout, /charge\n\s+input:\s+\{"type":"object"/);
  const broken = await wfx('domains', 'register', 'x', '--file', 'broken.yaml');
  t.equal(broken.code, 2);
  t.match(broken.stderr, /USAGE_ERROR: broken.yaml is not YAML or JSON/);
  const missing = await wfx('domains', 'show', 'crm');
  t.equal(missing.code, 1);
  t.match(missing.stderr, /DOMAIN_NOT_FOUND/);

  const flow = join(cwd, 'charge.yaml');
  await writeFile(flow, chargeFlow().replace('AUTO', '4b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e'));
  t.equal((await wfx('flow', 'publish', 'charge.yaml')).code, 0);
  await h.start('4b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e', { amount: 5 });
  const listed = await wfx('jobs', 'list');
  t.match(
    listed.stdout,
    /JOB\s+ACTION\s+STATE\s+WORKER\s+UNTIL\s+ATTEMPT\s+CREATED\s+LAST ERROR\n\S+\.n2\s+billing\/charge\s+waiting\s+-\s+-\s+1\/3\s/,
  );
  const json = JSON.parse((await wfx('jobs', 'list', '--json')).stdout) as Array<{ state: string; input?: unknown }>;
  t.match(json, [{ state: 'waiting', domain: 'billing', action: 'charge', attempt: 1, maxAttempts: 3 }]);
  const del = await wfx('domains', 'delete', 'billing');
  t.equal(del.code, 1);
  t.match(del.stderr, /DOMAIN_IN_USE: 1 job of domain billing \(charge\) still waits/);
});
