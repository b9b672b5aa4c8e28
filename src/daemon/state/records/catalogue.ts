/**
 * Records of the directory an organization keeps: the organization itself, its API keys, its
 * flows and which version runs where, its environment variables and flow secrets, its domains
 * (job queues) and its model providers.
 */
import type { AiProvider, ApiKey, ApiKeyStatus, Domain, Environment, FlowVersion } from '../state.js';
import type { Handlers } from './handlers.js';

/** The records of the directory (WfxRecord). */
export type CatalogueRecord =
  | { readonly type: 'organization.created'; readonly name: string; readonly at: string }
  | { readonly type: 'apiKey.created'; readonly key: ApiKey }
  | {
      readonly type: 'apiKey.statusChanged';
      readonly keyId: string;
      readonly status: ApiKeyStatus;
      readonly at: string;
    }
  | {
      readonly type: 'apiKey.updated';
      readonly keyId: string;
      readonly changes: Partial<Pick<ApiKey, 'name' | 'rateLimitPerMinute' | 'rateLimitPerHour' | 'expiresAt'>>;
      readonly at: string;
    }
  | {
      readonly type: 'flow.published';
      readonly processId: string;
      readonly organization: string;
      readonly version: FlowVersion;
    }
  | {
      readonly type: 'flow.activated';
      readonly processId: string;
      readonly environment: Environment;
      readonly version: string;
    }
  /** `environment` runs no version of the flow any more (a deploy's prune); its executions go on. */
  | { readonly type: 'flow.deactivated'; readonly processId: string; readonly environment: Environment }
  /** The flow's schedule triggers fire in `environment` (`on`) or not. */
  | {
      readonly type: 'flow.schedules';
      readonly processId: string;
      readonly environment: Environment;
      readonly on: boolean;
    }
  | {
      readonly type: 'env.set';
      readonly organization: string;
      readonly environment: Environment;
      readonly name: string;
      readonly value: string | null;
    }
  /** A flow secret's value was set (`value` sealed), or removed (`value` null). */
  | {
      readonly type: 'flowSecret.set';
      readonly organization: string;
      readonly environment: Environment;
      readonly name: string;
      readonly value: string | null;
      readonly at: string;
    }
  /** A domain was registered (or registered again: replaced whole). */
  | { readonly type: 'domain.saved'; readonly domain: Domain }
  | { readonly type: 'domain.deleted'; readonly organization: string; readonly name: string }
  /** A model provider was added or changed; `isDefault` clears the organization's other defaults. */
  | { readonly type: 'aiProvider.saved'; readonly provider: AiProvider }
  | { readonly type: 'aiProvider.deleted'; readonly providerId: string };

/** The reducer's part for the directory (records.ts). */
export const catalogueHandlers: Handlers<CatalogueRecord> = {
  'organization.created': (state, r) => {
    state.organizations[r.name] ??= { name: r.name, createdAt: r.at };
  },
  'apiKey.created': (state, r) => {
    state.apiKeys[r.key.keyId] = { ...r.key };
  },
  'apiKey.statusChanged': (state, r) => {
    const key = state.apiKeys[r.keyId];
    if (!key) return;
    key.status = r.status;
    key.updatedAt = r.at;
  },
  'apiKey.updated': (state, r) => {
    const key = state.apiKeys[r.keyId];
    if (!key) return;
    state.apiKeys[r.keyId] = { ...key, ...r.changes, updatedAt: r.at };
  },
  'flow.published': (state, r) => {
    const def = r.version.definition;
    const flow = (state.flows[r.processId] ??= {
      processId: r.processId,
      organization: r.organization,
      name: def.name,
      public: def.public === true,
      versions: {},
      active: {},
    });
    flow.versions[r.version.version] = r.version;
    flow.name = def.name;
    flow.public = def.public === true;
  },
  'flow.activated': (state, r) => {
    const flow = state.flows[r.processId];
    if (flow) flow.active[r.environment] = r.version;
  },
  'flow.deactivated': (state, r) => {
    const flow = state.flows[r.processId];
    if (flow) delete flow.active[r.environment];
  },
  'flow.schedules': (state, r) => {
    const flow = state.flows[r.processId];
    if (!flow) return;
    const off = (flow.schedulesOff ?? []).filter((e) => e !== r.environment);
    if (!r.on) off.push(r.environment);
    if (off.length > 0) flow.schedulesOff = off.sort();
    else delete flow.schedulesOff;
  },
  'env.set': (state, r) => {
    const byEnv = (state.environments[r.organization] ??= {});
    const vars = (byEnv[r.environment] ??= {});
    if (r.value === null) delete vars[r.name];
    else vars[r.name] = r.value;
  },
  'flowSecret.set': (state, r) => {
    const byEnv = (state.flowSecrets[r.organization] ??= {});
    const named = (byEnv[r.environment] ??= {});
    if (r.value !== null) named[r.name] = { value: r.value, updatedAt: r.at };
    else {
      delete named[r.name];
      if (Object.keys(named).length === 0) delete byEnv[r.environment];
      if (Object.keys(byEnv).length === 0) delete state.flowSecrets[r.organization];
    }
  },
  'domain.saved': (state, r) => {
    (state.domains[r.domain.organization] ??= {})[r.domain.name] = r.domain;
  },
  'domain.deleted': (state, r) => {
    const org = state.domains[r.organization];
    if (!org) return;
    delete org[r.name];
    if (Object.keys(org).length === 0) delete state.domains[r.organization];
  },
  'aiProvider.saved': (state, r) => {
    if (r.provider.isDefault) {
      for (const [id, p] of Object.entries(state.aiProviders))
        if (p.organization === r.provider.organization && p.isDefault && id !== r.provider.providerId)
          state.aiProviders[id] = { ...p, isDefault: false };
    }
    state.aiProviders[r.provider.providerId] = r.provider;
  },
  'aiProvider.deleted': (state, r) => {
    delete state.aiProviders[r.providerId];
  },
};
