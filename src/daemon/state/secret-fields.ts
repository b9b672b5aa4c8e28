/**
 * The secrets the state keeps, in one place: model providers' API keys, email connections'
 * passwords, webhook signing secrets and flows' `{secret.NAME}` values. Each is stored sealed (secrets/envelope.ts) for a
 * context naming its record and field, so a sealed value cannot be moved to another record.
 * Rotation and the conversion of values an earlier version stored in plain text find every
 * secret here and reseal it with a `secret.resealed` record. Pure: no keys, no I/O.
 */
import type { EndpointEnvironment, Environment, FlowSecret, WebhookSecret, WfxState } from './state.js';

/** Which stored secret a record names. A new kind of secret adds a case here and in the functions below. */
export type SecretRef =
  | { readonly kind: 'aiProvider.apiKey'; readonly providerId: string }
  | { readonly kind: 'emailConnection.password'; readonly connectionId: string }
  | { readonly kind: 'webhook.secret'; readonly webhookId: string; readonly environment: EndpointEnvironment }
  | {
      readonly kind: 'flowSecret.value';
      readonly organization: string;
      readonly environment: Environment;
      readonly name: string;
    };

/** One secret as stored: where it is, its context, its stored value (sealed, or plain from an earlier version). */
export interface StoredSecret {
  readonly ref: SecretRef;
  readonly context: string;
  readonly value: string;
}

/** The context a provider's API key is sealed for. */
export function providerKeyContext(p: { readonly organization: string; readonly providerId: string }): string {
  return JSON.stringify(['aiProvider.apiKey', p.organization, p.providerId]);
}

/** The context an email connection's password is sealed for. */
export function emailPasswordContext(c: { readonly organization: string; readonly connectionId: string }): string {
  return JSON.stringify(['emailConnection.password', c.organization, c.connectionId]);
}

/** The context a webhook endpoint's signing secrets are sealed for (a rotated-out one keeps its context). */
export function webhookSecretContext(
  w: { readonly organization: string; readonly webhookId: string },
  environment: EndpointEnvironment,
): string {
  return JSON.stringify(['webhook.secret', w.organization, w.webhookId, environment]);
}

/** The context a flow secret's value is sealed for. */
export function flowSecretContext(s: {
  readonly organization: string;
  readonly environment: Environment;
  readonly name: string;
}): string {
  return JSON.stringify(['flowSecret.value', s.organization, s.environment, s.name]);
}

/** Every secret the state holds, in a stable order. */
export function storedSecrets(state: WfxState): StoredSecret[] {
  const out: StoredSecret[] = [];
  for (const p of Object.values(state.aiProviders))
    if (p.apiKey !== undefined)
      out.push({
        ref: { kind: 'aiProvider.apiKey', providerId: p.providerId },
        context: providerKeyContext(p),
        value: p.apiKey,
      });
  for (const c of Object.values(state.emailConnections))
    out.push({
      ref: { kind: 'emailConnection.password', connectionId: c.connectionId },
      context: emailPasswordContext(c),
      value: c.password,
    });
  for (const w of Object.values(state.webhooks))
    for (const e of w.endpoints)
      for (const s of e.secrets)
        out.push({
          ref: { kind: 'webhook.secret', webhookId: w.webhookId, environment: e.environment },
          context: webhookSecretContext(w, e.environment),
          value: s.secret,
        });
  for (const [organization, byEnv] of Object.entries(state.flowSecrets))
    for (const [environment, named] of Object.entries(byEnv) as Array<[Environment, Record<string, FlowSecret>]>)
      for (const [name, s] of Object.entries(named)) {
        const ref = { kind: 'flowSecret.value', organization, environment, name } as const;
        out.push({ ref, context: flowSecretContext(ref), value: s.value });
      }
  return out;
}

/**
 * Applies a reseal: the secret `ref` names becomes `to` if it is still `from` (a value changed
 * or removed since the reseal was computed is left as it is). `to` null forgets it (its key was
 * lost): a provider without an API key, a connection with an empty password, an endpoint
 * without that signing secret. Deterministic.
 */
export function applyReseal(state: WfxState, ref: SecretRef, from: string, to: string | null): void {
  switch (ref.kind) {
    case 'aiProvider.apiKey': {
      const p = state.aiProviders[ref.providerId];
      if (p?.apiKey !== from) return;
      const { apiKey: _gone, ...rest } = p;
      state.aiProviders[ref.providerId] = to === null ? rest : { ...p, apiKey: to };
      return;
    }
    case 'emailConnection.password': {
      const c = state.emailConnections[ref.connectionId];
      if (c?.password === from) state.emailConnections[ref.connectionId] = { ...c, password: to ?? '' };
      return;
    }
    case 'flowSecret.value': {
      const named = state.flowSecrets[ref.organization]?.[ref.environment];
      const s = named?.[ref.name];
      if (!named || s?.value !== from) return;
      if (to === null) delete named[ref.name];
      else named[ref.name] = { ...s, value: to };
      return;
    }
    case 'webhook.secret': {
      const w = state.webhooks[ref.webhookId];
      if (!w) return;
      const replace = (s: WebhookSecret): WebhookSecret[] =>
        s.secret !== from ? [s] : to === null ? [] : [{ ...s, secret: to }];
      w.endpoints = w.endpoints.map((e) =>
        e.environment !== ref.environment || !e.secrets.some((s) => s.secret === from)
          ? e
          : { ...e, secrets: e.secrets.flatMap(replace) },
      );
      return;
    }
  }
}
