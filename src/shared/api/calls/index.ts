/*
 * The daemon's HTTP API as typed calls: one function per route, its parameters and answer typed
 * from the wire contract (shared/api), its path made here and nowhere else. Pure: a call is data
 * that a transport sends (src/client's ApiClient, the console's api/http.ts).
 */
import { path, withQuery } from './call.js';
import {
  aiProviders,
  domains,
  emailConnections,
  environments,
  flows,
  keys,
  project,
  secrets,
  sessions,
  triggers,
  schedules,
  webhooks,
} from './catalogue.js';
import { files, health, jobs, memory, operator } from './commons.js';
import { auth, bulk, events, instances, processStarts, tasks } from './executions.js';

export { path, withQuery, sent, type Call, type Method, type Send, type Sent } from './call.js';
export type { Org } from './catalogue.js';

/** Every route's call, by area (as WfxClient's groups are named). */
export const calls = {
  health,
  auth,
  process: processStarts,
  instances,
  tasks,
  events,
  bulk,
  flows,
  keys,
  sessions,
  webhooks,
  emailConnections,
  aiProviders,
  environments,
  secrets,
  project,
  domains,
  triggers,
  schedules,
  memory,
  files,
  jobs,
  operator,
};

/** The API's addresses a browser is sent to (a page load, not a call). Pure. */
export const links = {
  /** GET /auth/login: signs in at the identity provider, then back to `returnTo`. */
  login: (returnTo: string) => withQuery('/auth/login', { returnTo }),
};

/** The paths of the API's Server-Sent Events streams (a transport opens them its own way). Pure. */
export const streams = {
  /** GET /events: lifecycle events (`event`: its type, `data`: the event). */
  events: () => '/events',
  /**
   * GET /process/instance/{id}/logs: each entry (`data`: a LogEntry, `id`: its number), then
   * `event: end` once the execution finished; `follow: false` ends after the entries so far.
   */
  logs: (id: string, query: { follow?: boolean } = {}) => withQuery(path`/process/instance/${id}/logs`, query),
  /** GET /admin/webhooks/{name}/deliveries/stream: each delivery as it is processed (`event: delivery`). */
  deliveries: (name: string, query: { organization?: string } = {}) =>
    withQuery(path`/admin/webhooks/${name}/deliveries/stream`, query),
};
