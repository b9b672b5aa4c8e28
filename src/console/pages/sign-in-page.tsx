/*
 * /sign-in — an API key pasted once (it stays in the daemon's session, never in the page), the
 * identity provider when the daemon has one, and a word on `wfx console`'s one-time link. Back to
 * `returnTo` after, when it is a path of this origin (the daemon's own check: shared/return-to.ts).
 */
import { useRoute } from 'preact-iso/router';
import type { TargetedEvent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { calls, links } from '../../shared/api/calls/index.js';
import type { ConsoleAuthConfig } from '../../shared/api/console.js';
import { errorMessage } from '../../shared/errors.js';
import { safeReturnTo } from '../../shared/return-to.js';
import { ApiError, send } from '../api/http.js';
import { useTitle } from '../hooks/use-title.js';

/** The sign-in page. */
export default function SignInPage() {
  const { query } = useRoute();
  const returnTo = safeReturnTo(query.returnTo);
  const [config, setConfig] = useState<Pick<ConsoleAuthConfig, 'oidc'> | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useTitle('Sign in');
  useEffect(() => {
    send(calls.auth.config(), { keep401: true })
      .then(setConfig)
      .catch(() => setConfig({ oidc: false }));
  }, []);

  const submit = async (e: TargetedEvent<HTMLFormElement>) => {
    e.preventDefault();
    const apiKey = String(new FormData(e.currentTarget).get('apiKey') ?? '').trim();
    if (apiKey === '') return setError('Paste an API key.');
    setBusy(true);
    setError(null);
    try {
      await send(calls.auth.signIn({ apiKey }), { keep401: true });
      location.assign(returnTo);
    } catch (err) {
      setBusy(false);
      setError(
        err instanceof ApiError && err.code === 'UNAUTHORIZED'
          ? 'The daemon refused this key (unknown, revoked, suspended or expired).'
          : `Signing in failed: ${errorMessage(err)}`,
      );
    }
  };

  return (
    <div class="sign-in">
      <h1>Sign in to wfx</h1>
      {config?.oidc && (
        <p>
          <a class="button-link primary" href={links.login(returnTo)}>
            Sign in with your identity provider
          </a>
        </p>
      )}
      <form class="sign-in-form" onSubmit={(e) => void submit(e)}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="apiKey"
          type="password"
          autocomplete="off"
          spellcheck={false}
          aria-describedby="api-key-help"
          aria-invalid={error !== null}
          required
        />
        <p id="api-key-help" class="muted">
          The key is kept by the daemon in your session; the browser never stores it.
        </p>
        {error && (
          <p role="alert" class="error-text">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in with the key'}
        </button>
      </form>
      <p class="muted">
        On the daemon's machine, <code>wfx console</code> opens this console already signed in (a one-time link).
      </p>
    </div>
  );
}
