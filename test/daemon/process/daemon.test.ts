import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../../../src/daemon/process/daemon.js';
import { AUDIENCE, startIssuer } from '../../helpers/oidc-issuer.js';

t.test(
  'an in-process daemon has its whole log on disk as soon as stop resolves (the log buffers its lines)',
  async (t) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'wfx-daemon-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const daemon = await startDaemon({ dataDir, port: 0 });
    await daemon.stop();
    const log = await readFile(join(dataDir, 'logs', 'daemon.log'), 'utf8');
    t.match(log, /"msg":"wfx daemon listening"[\s\S]*"msg":"stopped"/, 'the last line is there, no timer waited for');
  },
);

t.test(
  'a daemon started with an OIDC issuer accepts its bearer tokens (the verifier and jose load only for such a daemon)',
  async (t) => {
    const idp = await startIssuer(t);
    const dataDir = await mkdtemp(join(tmpdir(), 'wfx-daemon-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const daemon = await startDaemon({ dataDir, port: 0, oidc: { issuer: idp.issuer, audience: AUDIENCE } });
    t.teardown(() => daemon.stop());
    const whoami = (token: string) =>
      fetch(`${daemon.info.url}/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });
    const ok = await whoami(await idp.token('acme-operator'));
    t.equal(ok.status, 200);
    t.match(
      await ok.json(),
      { subject: 'acme-operator', organization: 'acme' },
      'the token is verified against the issuer',
    );
    const refused = await whoami('not.a.jwt');
    t.equal(refused.status, 401);
    t.match(await refused.json(), { error: 'UNAUTHORIZED' });
  },
);
