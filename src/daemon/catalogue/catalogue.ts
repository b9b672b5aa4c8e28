/**
 * The catalogue: the configuration an operator keeps through the admin API (API keys,
 * environments' variables, flow secrets, AI providers, job domains, email connections, webhook registrations)
 * and the memory entries forgotten there. It alone turns such a change into the journal's
 * records: the routes check and shape a change, then hand it here, so that what a change writes
 * (an organization created with its first key or domain, the sealing key pinned with the first
 * value sealed under it) is decided in one place and no route writes the journal.
 */
import type { WfxRecord } from '../state/records.js';
import type { Environment, WfxState } from '../state/state.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { flowSecretContext } from '../state/secret-fields.js';
import { resealedFromSecret } from './credentials.js';
import type { DurableStore } from '../store/durable-store.js';

/** The record of type `T`. */
type RecordOf<T extends WfxRecord['type']> = Extract<WfxRecord, { type: T }>;

export class Catalogue {
  constructor(
    private readonly store: DurableStore<WfxState, WfxRecord>,
    private readonly secrets: SecretBox,
  ) {}

  /** Keeps a new API key, creating its organization first when it has none yet. */
  async createKey(key: RecordOf<'apiKey.created'>['key'], at: string): Promise<void> {
    await this.store.commit(...this.organization(key.organization, at), { type: 'apiKey.created', key });
  }

  async updateKey(keyId: string, changes: RecordOf<'apiKey.updated'>['changes'], at: string): Promise<void> {
    await this.store.commit({ type: 'apiKey.updated', keyId, changes, at });
  }

  async setKeyStatus(keyId: string, status: RecordOf<'apiKey.statusChanged'>['status'], at: string): Promise<void> {
    await this.store.commit({ type: 'apiKey.statusChanged', keyId, status, at });
  }

  /** Sets `{env.NAME}` `name` of `environment` to `value`; null removes it. */
  async setVariable(
    organization: string,
    environment: RecordOf<'env.set'>['environment'],
    name: string,
    value: string | null,
  ): Promise<void> {
    await this.store.commit({ type: 'env.set', organization, environment, name, value });
  }

  /**
   * Sets flow secret `name` of `environment` to `value` (plain text: sealed here, for its
   * context), and in the same commit into each entry whose credential came from it
   * (credentials.ts); null removes it (the entries keep the value they have).
   */
  async setFlowSecret(
    organization: string,
    environment: RecordOf<'flowSecret.set'>['environment'],
    name: string,
    value: string | null,
    at: string,
  ): Promise<void> {
    const sealed =
      value === null ? null : this.secrets.seal(value, flowSecretContext({ organization, environment, name }));
    const dependents =
      value === null
        ? []
        : resealedFromSecret(this.store.state, this.secrets, { organization, environment, name }, value, new Date(at));
    await this.store.commit(
      ...(sealed === null ? [] : this.pinned()),
      { type: 'flowSecret.set', organization, environment, name, value: sealed, at },
      ...dependents,
    );
  }

  /** Keeps an AI provider, its key sealed under the box's sealing key. */
  async saveProvider(provider: RecordOf<'aiProvider.saved'>['provider']): Promise<void> {
    await this.store.commit(...this.pinned(), { type: 'aiProvider.saved', provider });
  }

  /** Turns a flow's schedules in `environment` on or off (paused); answers nothing new when they already are. */
  async setSchedules(processId: string, environment: Environment, on: boolean): Promise<void> {
    const off = this.store.state.flows[processId]?.schedulesOff?.includes(environment) === true;
    if (off === !on) return this.store.flush();
    await this.store.commit({ type: 'flow.schedules', processId, environment, on });
  }

  async deleteProvider(providerId: string): Promise<void> {
    await this.store.commit({ type: 'aiProvider.deleted', providerId });
  }

  /** Keeps a job domain, creating its organization first when it has none yet. */
  async saveDomain(domain: RecordOf<'domain.saved'>['domain']): Promise<void> {
    await this.store.commit(...this.organization(domain.organization, domain.updatedAt), {
      type: 'domain.saved',
      domain,
    });
  }

  async deleteDomain(organization: string, name: string): Promise<void> {
    await this.store.commit({ type: 'domain.deleted', organization, name });
  }

  /** Keeps an email connection, its password sealed under the box's sealing key. */
  async saveConnection(connection: RecordOf<'emailConnection.saved'>['connection']): Promise<void> {
    await this.store.commit(...this.pinned(), { type: 'emailConnection.saved', connection });
  }

  async deleteConnection(connectionId: string): Promise<void> {
    await this.store.commit({ type: 'emailConnection.deleted', connectionId });
  }

  /** Keeps a webhook registration, its endpoints' secrets sealed under the box's sealing key. */
  async saveWebhook(webhook: RecordOf<'webhook.saved'>['webhook']): Promise<void> {
    await this.store.commit(...this.pinned(), { type: 'webhook.saved', webhook });
  }

  async deleteWebhook(webhookId: string): Promise<void> {
    await this.store.commit({ type: 'webhook.deleted', webhookId });
  }

  /** Forgets memory entry `key` of `namespace`. */
  async forgetMemory(organization: string, namespace: string, key: string): Promise<void> {
    await this.store.commit({ type: 'memory.written', organization, namespace, key, entry: null });
  }

  /**
   * Commits a deploy's records (project/apply.ts) as one journal entry, all or none after a
   * crash: the organization created and the sealing key pinned first, as each change would.
   */
  async commitProject(organization: string, records: readonly WfxRecord[], at: string): Promise<void> {
    // Nothing to change, but the plan may rest on records still being made durable: wait for those.
    if (records.length === 0) return this.store.flush();
    await this.store.commit(...this.organization(organization, at), ...this.pinned(), ...records);
  }

  /** Makes the box's sealing key the state's (a rotation), before anything is sealed with it. */
  async pinSecretsKey(): Promise<void> {
    const pin = this.secrets.pin(this.store.state);
    if (pin.length > 0) await this.store.commit(...pin);
  }

  /** The records that make the box's sealing key the state's: none when it is already. */
  private pinned(): WfxRecord[] {
    return this.secrets.pin(this.store.state);
  }

  /** `organization.created` for `name` when it is not there yet (null: a system key's, none). */
  private organization(name: string | null, at: string): WfxRecord[] {
    return name !== null && !this.store.state.organizations[name] ? [{ type: 'organization.created', name, at }] : [];
  }
}
