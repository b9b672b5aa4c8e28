/**
 * A deploy's plan for the catalogue entries wfx.yaml declares: webhook registrations, email
 * connections, model providers. An entry is matched by name within the organization; one
 * declared and absent is created, one that differs is changed in place (a webhook keeps its
 * endpoint URLs unless its environmentMode changes), one not declared is removed under `prune`
 * unless a flow still names it. A credential is named (`secret: NAME`): the flow secret's value
 * is sealed into the entry, again whenever the deploy finds it changed.
 */
import type { EndpointEnvironment, ProjectConnection, ProjectProvider } from '../../shared/api/index.js';
import { WEBHOOK_DEFAULT_MAX_BODY_BYTES } from '../../shared/api/index.js';
import type { WfxError } from '../../shared/errors.js';
import { modelLabelOf } from '../ai/provider-config.js';
import { rotatedEndpoints } from '../catalogue/credentials.js';
import { customSchemeOf, newToken } from '../catalogue/webhook-entry.js';
import { uuidv7 } from '../state/ids.js';
import { emailPasswordContext, providerKeyContext, webhookSecretContext } from '../state/secret-fields.js';
import type { WfxRecord } from '../state/records.js';
import type { AiProvider, EmailConnection, WebhookEndpoint, WebhookRegistration } from '../state/state.js';
import { differences, type PlanBuilder } from './plan-builder.js';

/** `o` without the properties whose value is undefined (so the journal holds none). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Plans the webhooks wfx.yaml declares (none when it has no `webhooks` key). */
export function planWebhooks(plan: PlanBuilder): void {
  const { state, organization, now, secrets } = plan.ctx;
  const at = now.toISOString();
  for (const w of plan.ctx.config.webhooks ?? []) {
    const existing = Object.values(state.webhooks).find((x) => x.organization === organization && x.name === w.name);
    let custom;
    try {
      custom = customSchemeOf(w);
    } catch (err) {
      plan.problem('webhook', w.name, (err as WfxError).code, (err as WfxError).message);
      continue;
    }
    const authType = w.authType ?? 'HMAC';
    const environmentMode = w.environmentMode ?? 'SHARED';
    if (
      authType === 'HMAC' &&
      w.secret === undefined &&
      (!existing || existing.environmentMode !== environmentMode || existing.authType !== 'HMAC')
    ) {
      plan.problem(
        'webhook',
        w.name,
        'VALIDATION_ERROR',
        `webhook ${w.name} signs its deliveries: name its signing secret (secret: NAME, set with wfx secrets set NAME)`,
      );
      continue;
    }
    const credential =
      w.secret === undefined || authType === 'NONE' ? null : plan.credential('webhook', w.name, w.secret);
    if (w.secret !== undefined && authType === 'HMAC' && credential === null) continue;
    const webhookId = existing?.webhookId ?? uuidv7(now);
    const envs: EndpointEnvironment[] = environmentMode === 'PER_ENVIRONMENT' ? ['DEVELOPMENT', 'PRODUCTION'] : ['ALL'];
    const seal = (environment: EndpointEnvironment) =>
      credential === null
        ? []
        : [
            {
              secret: secrets.seal(credential.value, webhookSecretContext({ organization, webhookId }, environment)),
              expiresAt: null,
            },
          ];
    const scheme = {
      provider: w.provider,
      environmentMode,
      authType,
      custom,
      maxBodyBytes: w.maxBodyBytes ?? WEBHOOK_DEFAULT_MAX_BODY_BYTES,
      respondWithin: w.respondWithin,
    };
    if (!existing) {
      const endpoints: WebhookEndpoint[] = envs.map((environment) => ({
        environment,
        token: newToken(),
        secrets: seal(environment),
      }));
      const webhook: WebhookRegistration = defined({
        webhookId,
        name: w.name,
        organization,
        ...scheme,
        maxBodyBytes: w.maxBodyBytes,
        endpoints,
        fromSecret: credential?.from,
        createdAt: at,
        updatedAt: at,
      });
      plan.records.push({ type: 'webhook.saved', webhook });
      plan.change('webhook', w.name, 'create', [
        `provider ${w.provider}`,
        ...(w.secret ? [`signing secret from ${w.secret}`] : []),
      ]);
      continue;
    }
    const was = { ...existing, maxBodyBytes: existing.maxBodyBytes ?? WEBHOOK_DEFAULT_MAX_BODY_BYTES };
    const details = differences(was, scheme, [
      'provider',
      'environmentMode',
      'authType',
      'custom',
      'maxBodyBytes',
      'respondWithin',
    ]);
    let endpoints = existing.endpoints;
    if (environmentMode !== existing.environmentMode) {
      endpoints = envs.map((environment) => ({ environment, token: newToken(), secrets: seal(environment) }));
      details.push('new endpoint URLs (wfx webhooks show prints them)');
    } else if (authType === 'NONE') {
      endpoints = endpoints.map((e) => ({ ...e, secrets: [] }));
    } else if (credential !== null) {
      const stale = endpoints.some(
        (e) => !plan.holds(e.secrets[0]?.secret, webhookSecretContext(existing, e.environment), credential.value),
      );
      if (stale) {
        endpoints = rotatedEndpoints(
          existing,
          (environment) => secrets.seal(credential.value, webhookSecretContext(existing, environment)),
          now,
        );
        details.push(`signing secret from ${w.secret!} (the previous one works for 24h)`);
      }
    }
    if (
      w.secret !== undefined &&
      existing.fromSecret?.name !== w.secret &&
      !details.some((d) => d.startsWith('signing secret'))
    )
      details.push(`signing secret named ${w.secret}`);
    if (details.length === 0) {
      plan.change('webhook', w.name, 'unchanged');
      continue;
    }
    const fromSecret = authType === 'NONE' ? undefined : (credential?.from ?? existing.fromSecret);
    const { fromSecret: _was, maxBodyBytes: _max, respondWithin: _answer, ...rest } = existing;
    const webhook: WebhookRegistration = defined({
      ...rest,
      ...scheme,
      maxBodyBytes: w.maxBodyBytes,
      endpoints,
      fromSecret,
      updatedAt: at,
    });
    plan.records.push({ type: 'webhook.saved', webhook });
    plan.change('webhook', w.name, 'update', details);
  }
}

/** Plans the email connections wfx.yaml declares (none when it has no `emailConnections` key). */
export function planConnections(plan: PlanBuilder): void {
  const { state, organization, now, secrets } = plan.ctx;
  const at = now.toISOString();
  for (const c of plan.ctx.config.emailConnections ?? []) {
    const existing = Object.values(state.emailConnections).find(
      (x) => x.organization === organization && x.name === c.name,
    );
    if (c.secret === undefined && !existing) {
      plan.problem(
        'emailConnection',
        c.name,
        'VALIDATION_ERROR',
        `email connection ${c.name} needs its password: name it (secret: NAME, set with wfx secrets set NAME)`,
      );
      continue;
    }
    const credential = c.secret === undefined ? null : plan.credential('emailConnection', c.name, c.secret);
    if (c.secret !== undefined && credential === null) continue;
    const fields = connectionFields(c);
    const connectionId = existing?.connectionId ?? uuidv7(now);
    const context = emailPasswordContext({ organization, connectionId });
    if (!existing) {
      const connection: EmailConnection = {
        connectionId,
        name: c.name,
        organization,
        ...fields,
        password: secrets.seal(credential!.value, context),
        fromSecret: credential!.from,
        createdAt: at,
        updatedAt: at,
      };
      plan.records.push({ type: 'emailConnection.saved', connection });
      plan.change('emailConnection', c.name, 'create', [
        `${fields.user}@${fields.host}:${fields.port} ${fields.mailbox}`,
      ]);
      continue;
    }
    const details = differences(existing, fields, ['host', 'port', 'security', 'user', 'mailbox']);
    const stale = credential !== null && !plan.holds(existing.password, context, credential.value);
    if (stale) details.push(`password from ${c.secret!}`);
    if (details.length === 0) {
      plan.change('emailConnection', c.name, 'unchanged');
      continue;
    }
    const connection: EmailConnection = defined({
      ...existing,
      ...fields,
      ...(stale && { password: secrets.seal(credential.value, context) }),
      fromSecret: credential?.from ?? existing.fromSecret,
      updatedAt: at,
    });
    plan.records.push({ type: 'emailConnection.saved', connection });
    plan.change('emailConnection', c.name, 'update', details);
  }
}

/** A declared connection's fields, with the API's defaults. */
function connectionFields(c: ProjectConnection) {
  const security = c.security ?? 'TLS';
  return {
    host: c.host,
    port: c.port ?? (security === 'TLS' ? 993 : 143),
    security,
    user: c.user,
    mailbox: c.mailbox ?? 'INBOX',
  };
}

/**
 * The provider a declaration makes, without ids (the API's defaults applied): what the deploy
 * checks before planning (checkProvider waits on the model file) and then plans.
 */
export function declaredProvider(
  p: ProjectProvider,
): Omit<AiProvider, 'providerId' | 'organization' | 'createdAt' | 'updatedAt'> {
  return defined({
    name: p.name,
    kind: p.kind,
    baseUrl: p.baseUrl,
    model: p.model ?? (p.modelPath === undefined ? undefined : modelLabelOf(p.modelPath)),
    modelPath: p.modelPath,
    threads: p.threads,
    contextSize: p.contextSize,
    isDefault: p.isDefault ?? false,
  }) as Omit<AiProvider, 'providerId' | 'organization' | 'createdAt' | 'updatedAt'>;
}

/** Plans the model providers wfx.yaml declares (checked already: project/apply.ts). */
export function planProviders(plan: PlanBuilder): void {
  const { state, organization, now, secrets } = plan.ctx;
  const at = now.toISOString();
  for (const p of plan.ctx.config.providers ?? []) {
    const existing = Object.values(state.aiProviders).find((x) => x.organization === organization && x.name === p.name);
    const credential = p.secret === undefined ? null : plan.credential('provider', p.name, p.secret);
    if (p.secret !== undefined && credential === null) continue;
    if (existing && existing.kind !== p.kind) {
      plan.problem(
        'provider',
        p.name,
        'VALIDATION_ERROR',
        `provider ${p.name} is ${existing.kind}: a provider's kind never changes (remove it first)`,
      );
      continue;
    }
    const fields = declaredProvider(p);
    const providerId = existing?.providerId ?? uuidv7(now);
    const context = providerKeyContext({ organization, providerId });
    const sealedKey = credential === null ? undefined : secrets.seal(credential.value, context);
    if (!existing) {
      const provider: AiProvider = defined({
        providerId,
        organization,
        ...fields,
        apiKey: sealedKey,
        fromSecret: credential?.from,
        createdAt: at,
        updatedAt: at,
      });
      plan.records.push({ type: 'aiProvider.saved', provider });
      plan.change('provider', p.name, 'create', [`${p.kind} ${fields.model ?? ''}`.trim()]);
      continue;
    }
    const details = differences(existing, fields, [
      'baseUrl',
      'model',
      'modelPath',
      'threads',
      'contextSize',
      'isDefault',
    ]);
    const stale = credential !== null && !plan.holds(existing.apiKey, context, credential.value);
    if (stale) details.push(`apiKey from ${p.secret!}`);
    if (details.length === 0) {
      plan.change('provider', p.name, 'unchanged');
      continue;
    }
    const { baseUrl: _b, modelPath: _m, threads: _t, contextSize: _c, ...kept } = existing;
    const provider: AiProvider = defined({
      ...kept,
      ...fields,
      apiKey: stale ? sealedKey : existing.apiKey,
      fromSecret: credential?.from ?? existing.fromSecret,
      updatedAt: at,
    });
    plan.records.push({ type: 'aiProvider.saved', provider });
    plan.change('provider', p.name, 'update', details);
  }
}

/**
 * Under `prune`, removes the entries of each kind wfx.yaml has a key for that it does not
 * declare; one a flow still names (an active version's trigger, after the flows' plan) refuses
 * the deploy instead. `named(kind, name)` says which flow names it, if any.
 */
export function pruneEntries(
  plan: PlanBuilder,
  named: (kind: 'webhook' | 'emailConnection', name: string) => string | null,
): void {
  const { state, organization, config } = plan.ctx;
  if (!plan.ctx.prune) return;
  /** Removes the entries of one kind wfx.yaml lists (`declared`) that it does not declare. */
  const prune = <T extends { organization: string; name: string }>(
    kind: 'webhook' | 'emailConnection' | 'provider',
    declared: ReadonlyArray<{ name: string }> | undefined,
    entries: Record<string, T>,
    removed: (entry: T) => WfxRecord,
    details: string[] = [],
  ) => {
    if (declared === undefined) return;
    for (const e of Object.values(entries)) {
      if (e.organization !== organization || declared.some((d) => d.name === e.name)) continue;
      const flow = kind === 'provider' ? null : named(kind, e.name);
      if (flow === null) {
        plan.records.push(removed(e));
        plan.change(kind, e.name, 'remove', details);
      } else {
        const what = kind === 'webhook' ? 'webhook' : 'email connection';
        plan.problem(kind, e.name, 'IN_USE', `${what} ${e.name} is not declared but flow ${flow} triggers on it`);
      }
    }
  };
  prune('webhook', config.webhooks, state.webhooks, (w) => ({ type: 'webhook.deleted', webhookId: w.webhookId }), [
    'its endpoints stop at once',
  ]);
  prune('emailConnection', config.emailConnections, state.emailConnections, (c) => ({
    type: 'emailConnection.deleted',
    connectionId: c.connectionId,
  }));
  prune('provider', config.providers, state.aiProviders, (p) => ({
    type: 'aiProvider.deleted',
    providerId: p.providerId,
  }));
}
