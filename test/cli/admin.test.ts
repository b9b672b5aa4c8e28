import '../setup/fixtures.js'; // fixtures under the OS temp dir (see there)
import t from 'tap';
import { startDaemon, wfxIn } from '../helpers/cli.js';

const FLOW = (name: string) => `processId: 4d5e6f70-8192-4aa3-8c4d-5e6f708192a3
name: ${name}
nodes:
  start: { type: startEvent, next: ask }
  ask: { type: inputNode, inputType: textbox, next: done, errorFlow: gone }
  done: { type: endEvent }
  gone: { type: endEvent }
`;
const PID = '4d5e6f70-8192-4aa3-8c4d-5e6f708192a3';

t.test('the rest of the commands, against a real daemon', async (t) => {
  const cwd = t.testdir({ 'v1.yaml': FLOW('One'), 'v2.yaml': FLOW('Two') });
  await startDaemon(t, { cwd });
  const run = (...args: string[]) => wfxIn(args, { cwd });

  t.equal((await run('flow', 'publish', 'v1.yaml')).code, 0);
  t.match((await run('flow', 'publish', 'v2.yaml')).stdout, /Two version 2 active in PRODUCTION/);
  t.match((await run('flow', 'activate', PID, '1')).stdout, /version 1 active in PRODUCTION/, 'rollback');
  t.match(JSON.parse((await run('flow', 'list', '--json')).stdout), [{ processId: PID, active: { PRODUCTION: '1' } }]);

  const id = (await run('run', PID)).stdout.trim();
  t.equal((await run('task', 'cancel', id, 'ask')).code, 0);
  const after = JSON.parse((await run('instances', 'get', id, '--json')).stdout) as {
    stateCd: number;
    nodes: Array<{ nodeId: string; statusCd: number }>;
  };
  t.equal(after.stateCd, 1, 'CANCEL took the errorFlow to an end');
  t.ok(after.nodes.some((n) => n.nodeId === 'gone' && n.statusCd === 2));

  const expired = await run('keys', 'create', '--name', 'dead', '--expires', '0s');
  t.equal(expired.code, 2, 'a key that would expire at once is refused as a validation error');
  t.match(expired.stderr, /^VALIDATION_ERROR: /);
  const key = JSON.parse((await run('keys', 'create', '--name', 'tmp', '--role', 'viewer', '--json')).stdout) as {
    keyId: string;
    apiKey: string;
  };
  const as = (...args: string[]) => wfxIn([...args, '--api-key', key.apiKey], { cwd });
  t.equal((await as('flow', 'list')).code, 0);
  t.match((await run('keys', 'suspend', key.keyId)).stdout, /SUSPENDED/);
  t.equal((await as('flow', 'list')).code, 5, 'a suspended key is refused');
  t.match((await run('keys', 'activate', key.keyId)).stdout, /ACTIVE/);
  t.equal((await as('flow', 'list')).code, 0);
  t.match((await run('keys', 'revoke', key.keyId)).stdout, /REVOKED/);
  const again = await run('keys', 'activate', key.keyId);
  t.equal(again.code, 1);
  t.match(again.stderr, /^KEY_REVOKED: /);

  t.equal((await run('env', 'set', 'TOKEN', 'abc', '--env', 'DEVELOPMENT')).code, 0);
  t.same(JSON.parse((await run('env', 'list', '--env', 'DEVELOPMENT', '--json')).stdout), { TOKEN: 'abc' });
  t.equal((await run('env', 'unset', 'TOKEN', '--env', 'DEVELOPMENT')).code, 0);
  t.same(JSON.parse((await run('env', 'list', '--env', 'DEVELOPMENT', '--json')).stdout), {});
  t.equal((await run('env', 'unset', 'TOKEN', '--env', 'DEVELOPMENT')).code, 1, 'unsetting what is not there');

  t.equal((await run('webhooks', 'create', '--name', 'hook', '--provider', 'STRIPE')).code, 0);
  const rotated = JSON.parse((await run('webhooks', 'rotate', 'hook', '--json')).stdout) as {
    rotated: Array<{ secret: string }>;
  };
  t.match(rotated.rotated[0]!.secret, /^whsec_/);
  t.equal((await run('webhooks', 'delete', 'hook')).code, 0);
  t.same(JSON.parse((await run('webhooks', 'list', '--json')).stdout), []);
  t.equal((await run('webhooks', 'deliveries', 'hook')).code, 1, 'a deleted registration is not found');
});
