import t from 'tap';
import { apiHarness } from '../../../helpers/api.js';
import { TestClock } from '../../../helpers/engine.js';
import { WfxError } from '../../../../src/shared/errors.js';
import type { Caller } from '../../../../src/daemon/api/caller.js';
import type { OidcLogin } from '../../../../src/daemon/api/console/oidc-login.js';
import { SessionStore, type SessionTokens } from '../../../../src/daemon/api/console/sessions.js';

const HOST = '127.0.0.1:7878';
const READ = new Set(['WORKFLOW_READ'] as const);

/** A caller as the bearer verifier makes it for an access token that expires at `expiresAtMs`. */
const jwtCaller = (subject: string, expiresAtMs: number): Caller => ({
  kind: 'jwt',
  keyId: null,
  subject,
  organization: 'acme',
  system: false,
  permissions: READ,
  expiresAtMs,
});

/*
 * The provider's side of a refresh is openid-client's against a real provider (the browser
 * tests); here, what the daemon does around it: renew once for parallel requests, carry on as
 * the renewed caller, end the session when renewal is refused.
 */
t.test('an OIDC session renews its access token once, then ends when renewal is refused', async (t) => {
  const clock = new TestClock();
  const now = () => clock.now().getTime();
  const sessions = new SessionStore(undefined, now);
  let refreshes = 0;
  let refuse = false;
  const login = {
    async refresh(tokens: SessionTokens) {
      refreshes++;
      await new Promise((resolve) => setImmediate(resolve));
      if (refuse) throw new WfxError('UNAUTHORIZED', 'the sign-in could not be renewed: invalid_grant');
      return {
        caller: jwtCaller('alice', now() + 60_000),
        tokens: { ...tokens, accessToken: `${tokens.accessToken}+`, refreshToken: 'rotated' },
      };
    },
  } as unknown as OidcLogin;
  const h = await apiHarness(t, { clock, console: { sessions, login } });
  const { cookie, session } = sessions.open('oidc', {
    kind: 'oidc',
    subject: 'alice',
    organization: 'acme',
    caller: jwtCaller('alice', now() + 1_000),
    tokens: { accessToken: 'at', refreshToken: 'rt', idToken: null },
  });
  const whoami = () =>
    h.app.inject({
      method: 'GET',
      url: '/auth/whoami',
      headers: { host: HOST, cookie: `wfx_session=${cookie}`, 'sec-fetch-site': 'same-origin' },
    });

  t.equal((await whoami()).json().subject, 'alice');
  t.equal(refreshes, 0, 'no renewal while the token holds');
  clock.advance(1_000);
  const answers = await Promise.all([whoami(), whoami(), whoami()]);
  t.same(
    answers.map((a) => a.statusCode),
    [200, 200, 200],
  );
  t.equal(refreshes, 1, 'one renewal for the requests that found the token expired together');
  const identity = sessions.list(null)[0]!.identity;
  t.match(
    identity,
    { kind: 'oidc', tokens: { accessToken: 'at+', refreshToken: 'rotated' } },
    'the renewed tokens kept',
  );

  clock.advance(60_000);
  refuse = true;
  t.equal((await whoami()).json().error, 'UNAUTHORIZED');
  t.notOk(sessions.isOpen(session.id), 'ended');
  t.equal((await whoami()).json().error, 'UNAUTHORIZED');
  t.equal(refreshes, 2, 'an ended session is not renewed again');
});
