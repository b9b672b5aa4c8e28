/*
 * The calls of the catalogue (/admin): flows, API keys, console sessions, webhooks, email
 * connections, model providers, environments' variables, job domains, and triggers' health.
 */
import type {
  Activated,
  Backfilled,
  BackfillBody,
  SchedulePauseBody,
  SchedulesPaused,
  ApplyProjectBody,
  ProjectApplied,
  ProjectExport,
  ProjectQuery,
  ActivateBody,
  ConnectionView,
  CreateConnectionBody,
  CreatedKey,
  CreateKeyBody,
  CoverageBody,
  CreateProviderBody,
  Deleted,
  DeliveryDetail,
  DeliveryList,
  DeliveryRecord,
  DomainList,
  DomainView,
  Environment,
  FlowCoverageList,
  FlowCoverageView,
  FlowDetail,
  FlowSecretList,
  FlowSecretListQuery,
  FlowSecretQuery,
  FlowSecretView,
  SetFlowSecretBody,
  FlowList,
  FlowPage,
  FlowPageQuery,
  KeyList,
  KeyView,
  ProviderList,
  ProviderTested,
  ProviderView,
  PromoteBody,
  Promoted,
  PublishBody,
  Published,
  RegisteredWebhook,
  RegisterDomainBody,
  RegisterWebhookBody,
  RotateBody,
  Rotated,
  SessionInfo,
  SignBody,
  Signed,
  TriggerList,
  UpdateConnectionBody,
  UpdateKeyBody,
  UpdateProviderBody,
  UpdateWebhookBody,
  VariableChanged,
  Variables,
  WebhookList,
  WebhookView,
} from '../index.js';
import { call, get, path, post, withQuery } from './call.js';

/** `?organization=` of admin requests (system callers name the organization they act in). */
export type Org = { readonly organization?: string };

export const flows = {
  /** POST /admin/flows: validates and publishes. Throws FLOW_INVALID (details.problems), PROCESS_ID_CONFLICT, FORBIDDEN. */
  publish: (body: PublishBody) => post<Published>('/admin/flows', body),
  /** GET /admin/flows. Throws FORBIDDEN. */
  list: (query: Org = {}) => get<FlowList>(withQuery('/admin/flows', query)),
  /** GET /admin/flows/{processId}: one version's definition (default: the latest). Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND. */
  get: (processId: string, version?: string) =>
    get<FlowDetail>(withQuery(path`/admin/flows/${processId}`, { version })),
  /** POST /admin/flows/{processId}/activate. Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND. */
  activate: (processId: string, body: ActivateBody) => post<Activated>(path`/admin/flows/${processId}/activate`, body),
  /** POST /admin/flows/{processId}/promote: `to` runs the version `from` runs. Throws PROCESS_NOT_FOUND, PROCESS_NOT_PUBLISHED, ALREADY_PROMOTED, FLOW_INVALID. */
  promote: (processId: string, body: PromoteBody) => post<Promoted>(path`/admin/flows/${processId}/promote`, body),
  /** POST /admin/flows/{processId}/coverage: keeps a test run's coverage for the version it ran. Throws PROCESS_NOT_FOUND, VERSION_NOT_FOUND (no version has its hash), VALIDATION_ERROR. */
  sendCoverage: (processId: string, body: CoverageBody) =>
    post<FlowCoverageView>(path`/admin/flows/${processId}/coverage`, body),
  /** GET /admin/flows/{processId}/coverage: the last coverage kept per version, newest first. Throws PROCESS_NOT_FOUND. */
  coverage: (processId: string, version?: string) =>
    get<FlowCoverageList>(withQuery(path`/admin/flows/${processId}/coverage`, { version })),
  /** GET /process/list: the flows the caller may start (public ones only without WORKFLOW_READ). */
  startable: (query: FlowPageQuery = {}) => get<FlowPage>(withQuery('/process/list', query)),
};

export const keys = {
  /** POST /admin/api-keys: the answer holds the secret, this once. Throws FORBIDDEN, VALIDATION_ERROR. */
  create: (body: CreateKeyBody) => post<CreatedKey>('/admin/api-keys', body),
  /** GET /admin/api-keys. Throws FORBIDDEN. */
  list: (query: Org = {}) => get<KeyList>(withQuery('/admin/api-keys', query)),
  /** GET /admin/api-keys/{keyId}. Throws NOT_FOUND. */
  get: (keyId: string) => get<KeyView>(path`/admin/api-keys/${keyId}`),
  /** PATCH /admin/api-keys/{keyId}. Throws NOT_FOUND, KEY_REVOKED. */
  update: (keyId: string, body: UpdateKeyBody) => call<KeyView>('PATCH', path`/admin/api-keys/${keyId}`, body),
  /** POST /admin/api-keys/{keyId}/{suspend|activate|revoke}. Throws NOT_FOUND, KEY_REVOKED. */
  setStatus: (keyId: string, action: 'suspend' | 'activate' | 'revoke') =>
    post<KeyView>(path`/admin/api-keys/${keyId}/${action}`),
};

/** Console sessions open on the daemon (ADMIN). */
export const sessions = {
  /** GET /admin/sessions: the caller's organization's, a system admin's all. Throws FORBIDDEN. */
  list: () => get<{ items: SessionInfo[] }>('/admin/sessions'),
  /** POST /admin/sessions/{sessionId}/revoke: ends it. Throws NOT_FOUND. */
  revoke: (sessionId: string) => post<SessionInfo>(path`/admin/sessions/${sessionId}/revoke`),
};

export const webhooks = {
  /** POST /admin/webhooks: the answer holds the endpoints' tokens and secrets, this once. Throws VALIDATION_ERROR. */
  register: (body: RegisterWebhookBody, query: Org = {}) =>
    post<RegisteredWebhook>(withQuery('/admin/webhooks', query), body),
  /** GET /admin/webhooks. */
  list: (query: Org = {}) => get<WebhookList>(withQuery('/admin/webhooks', query)),
  /** GET /admin/webhooks/{name}. Throws NOT_FOUND. */
  get: (name: string, query: Org = {}) => get<WebhookView>(withQuery(path`/admin/webhooks/${name}`, query)),
  /** PATCH /admin/webhooks/{name}: its limits (maxBodyBytes). Throws NOT_FOUND, VALIDATION_ERROR. */
  update: (name: string, body: UpdateWebhookBody, query: Org = {}) =>
    call<WebhookView>('PATCH', withQuery(path`/admin/webhooks/${name}`, query), body),
  /** DELETE /admin/webhooks/{name}. Throws NOT_FOUND. */
  delete: (name: string, query: Org = {}) => call<Deleted>('DELETE', withQuery(path`/admin/webhooks/${name}`, query)),
  /** POST /admin/webhooks/{name}/rotate: the new secrets, this once. Throws NOT_FOUND, VALIDATION_ERROR. */
  rotate: (name: string, body: RotateBody, query: Org = {}) =>
    post<Rotated>(withQuery(path`/admin/webhooks/${name}/rotate`, query), body),
  /** POST /admin/webhooks/{name}/sign: headers that sign a test payload. Throws NOT_FOUND, VALIDATION_ERROR. */
  sign: (name: string, body: SignBody, query: Org = {}) =>
    post<Signed>(withQuery(path`/admin/webhooks/${name}/sign`, query), body),
  /** GET /admin/webhooks/{name}/deliveries: newest first. Throws NOT_FOUND. */
  deliveries: (name: string, query: Org = {}) =>
    get<DeliveryList>(withQuery(path`/admin/webhooks/${name}/deliveries`, query)),
  /** GET /admin/webhooks/{name}/deliveries/{deliveryId}: its record, kept headers and body. Throws NOT_FOUND. */
  delivery: (name: string, deliveryId: string, query: Org = {}) =>
    get<DeliveryDetail>(withQuery(path`/admin/webhooks/${name}/deliveries/${deliveryId}`, query)),
  /**
   * POST /admin/webhooks/{name}/deliveries/{deliveryId}/redeliver: the new delivery's record.
   * Throws NOT_FOUND, DELIVERY_NOT_REDELIVERABLE, DELIVERY_BODY_NOT_KEPT.
   */
  redeliver: (name: string, deliveryId: string, query: Org = {}) =>
    post<DeliveryRecord>(withQuery(path`/admin/webhooks/${name}/deliveries/${deliveryId}/redeliver`, query)),
};

export const emailConnections = {
  /** POST /admin/email-connections. Throws VALIDATION_ERROR (a name in use). */
  create: (body: CreateConnectionBody, query: Org = {}) =>
    post<ConnectionView>(withQuery('/admin/email-connections', query), body),
  /** GET /admin/email-connections. */
  list: (query: Org = {}) => get<{ items: ConnectionView[] }>(withQuery('/admin/email-connections', query)),
  /** GET /admin/email-connections/{name}. Throws NOT_FOUND. */
  get: (name: string, query: Org = {}) => get<ConnectionView>(withQuery(path`/admin/email-connections/${name}`, query)),
  /** PATCH /admin/email-connections/{name}. Throws NOT_FOUND. */
  update: (name: string, body: UpdateConnectionBody, query: Org = {}) =>
    call<ConnectionView>('PATCH', withQuery(path`/admin/email-connections/${name}`, query), body),
  /** DELETE /admin/email-connections/{name}. Throws NOT_FOUND. */
  delete: (name: string, query: Org = {}) =>
    call<Deleted>('DELETE', withQuery(path`/admin/email-connections/${name}`, query)),
};

export const aiProviders = {
  /** POST /admin/ai-providers: the key is kept, never returned (`hasApiKey`). Throws VALIDATION_ERROR (a name in use, a field of the other kind, a base URL with credentials, a model file that is no GGUF file). */
  create: (body: CreateProviderBody, query: Org = {}) =>
    post<ProviderView>(withQuery('/admin/ai-providers', query), body),
  /** GET /admin/ai-providers. */
  list: (query: Org = {}) => get<ProviderList>(withQuery('/admin/ai-providers', query)),
  /** GET /admin/ai-providers/{name}. Throws NOT_FOUND. */
  get: (name: string, query: Org = {}) => get<ProviderView>(withQuery(path`/admin/ai-providers/${name}`, query)),
  /** PATCH /admin/ai-providers/{name} (`apiKey: null` removes the key). Throws NOT_FOUND, VALIDATION_ERROR (as `create`; a changed kind). */
  update: (name: string, body: UpdateProviderBody, query: Org = {}) =>
    call<ProviderView>('PATCH', withQuery(path`/admin/ai-providers/${name}`, query), body),
  /** DELETE /admin/ai-providers/{name}. Throws NOT_FOUND. */
  delete: (name: string, query: Org = {}) =>
    call<Deleted>('DELETE', withQuery(path`/admin/ai-providers/${name}`, query)),
  /** POST /admin/ai-providers/{name}/test: a tiny prompt, answered. Throws NOT_FOUND, AI_PROVIDER_TEST_FAILED (`details.code`: the node failure code), SERVICE_UNAVAILABLE. */
  test: (name: string, query: Org = {}) =>
    post<ProviderTested>(withQuery(path`/admin/ai-providers/${name}/test`, query)),
};

export const environments = {
  /** GET /admin/environments/{env}/variables. Throws FORBIDDEN. */
  variables: (env: Environment, query: Org = {}) =>
    get<Variables>(withQuery(path`/admin/environments/${env}/variables`, query)),
  /** PUT /admin/environments/{env}/variables/{name}. Throws VALIDATION_ERROR. */
  set: (env: Environment, name: string, value: string, query: Org = {}) =>
    call<VariableChanged>('PUT', withQuery(path`/admin/environments/${env}/variables/${name}`, query), { value }),
  /** DELETE /admin/environments/{env}/variables/{name}. Throws NOT_FOUND. */
  unset: (env: Environment, name: string, query: Org = {}) =>
    call<VariableChanged>('DELETE', withQuery(path`/admin/environments/${env}/variables/${name}`, query)),
};

export const secrets = {
  /** GET /admin/secrets/values: names, environments and times, never a value. Throws FORBIDDEN. */
  list: (query: FlowSecretListQuery = {}) => get<FlowSecretList>(withQuery('/admin/secrets/values', query)),
  /** PUT /admin/secrets/values/{name}: sets a value (sealed; never answered). Throws VALIDATION_ERROR, FORBIDDEN. */
  set: (name: string, body: SetFlowSecretBody) =>
    call<FlowSecretView>('PUT', path`/admin/secrets/values/${name}`, body),
  /** DELETE /admin/secrets/values/{name}. Throws NOT_FOUND. */
  delete: (name: string, query: FlowSecretQuery = {}) =>
    call<FlowSecretView>('DELETE', withQuery(path`/admin/secrets/values/${name}`, query)),
};

export const project = {
  /** POST /admin/project/apply: plans the project and, unless dryRun, carries it out as one change. Throws PROJECT_INVALID (details.problems; nothing changed), FORBIDDEN. */
  apply: (body: ApplyProjectBody) => post<ProjectApplied>('/admin/project/apply', body),
  /** GET /admin/project: what apply reads, for one environment (no secret values). Throws FORBIDDEN. */
  export: (query: ProjectQuery = {}) => get<ProjectExport>(withQuery('/admin/project', query)),
};

export const domains = {
  /** PUT /admin/domains/{name}: registers the domain, or replaces it whole. Throws VALIDATION_ERROR (`details.problems`: a schema that does not compile), DOMAIN_IN_USE (an action left out still has jobs). */
  register: (name: string, body: RegisterDomainBody, query: Org = {}) =>
    call<DomainView>('PUT', withQuery(path`/admin/domains/${name}`, query), body),
  /** GET /admin/domains. */
  list: (query: Org = {}) => get<DomainList>(withQuery('/admin/domains', query)),
  /** GET /admin/domains/{name}. Throws DOMAIN_NOT_FOUND. */
  get: (name: string, query: Org = {}) => get<DomainView>(withQuery(path`/admin/domains/${name}`, query)),
  /** DELETE /admin/domains/{name}. Throws DOMAIN_NOT_FOUND, DOMAIN_IN_USE. */
  delete: (name: string, query: Org = {}) => call<Deleted>('DELETE', withQuery(path`/admin/domains/${name}`, query)),
};

export const triggers = {
  /** GET /admin/triggers: every active flow version's triggers and their health. */
  list: (query: Org = {}) => get<TriggerList>(withQuery('/admin/triggers', query)),
};

export const schedules = {
  /** POST /admin/schedules/{processId}/pause: no fire in that environment until resumed. Throws PROCESS_NOT_FOUND. */
  pause: (processId: string, body: SchedulePauseBody) =>
    call<SchedulesPaused>('POST', path`/admin/schedules/${processId}/pause`, body),
  /** POST /admin/schedules/{processId}/resume. Throws PROCESS_NOT_FOUND. */
  resume: (processId: string, body: SchedulePauseBody) =>
    call<SchedulesPaused>('POST', path`/admin/schedules/${processId}/resume`, body),
  /** POST /admin/schedules/{processId}/backfill. Throws PROCESS_NOT_FOUND, NOT_FOUND (no such schedule), BACKFILL_TOO_LARGE. */
  backfill: (processId: string, body: BackfillBody) =>
    call<Backfilled>('POST', path`/admin/schedules/${processId}/backfill`, body),
};
