/**
 * The values of the secrets flows name (`{secret.NAME}`), read where they are kept: sealed in the
 * state (`wfx secrets set`), or, for organization default, a directory of mounted secret files
 * (`--secrets-dir`, Kubernetes and Docker secrets) read at each use so that a rotated file is
 * picked up. The serviceTask's call opens them as it goes out; a deploy checks they exist and
 * seals one into the entry that names it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../../shared/api/index.js';
import { errorMessage } from '../../shared/errors.js';
import { flowSecretContext } from '../state/secret-fields.js';
import type { WfxState } from '../state/state.js';
import type { SecretBox } from './secret-box.js';

/**
 * Secret `name`'s value from a directory of mounted secret files: `ENVIRONMENT/NAME`, else
 * `NAME`, its last newline cut; null when neither exists. `name` is a secret's name (no
 * separator, no dot first).
 */
async function mountedSecret(dir: string, environment: string, name: string): Promise<string | null> {
  for (const file of [join(dir, environment, name), join(dir, name)]) {
    try {
      return (await readFile(file, 'utf8')).replace(/\r?\n$/, '');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return null;
}

/** Why secret `name` cannot be used: it has no value in `environment`, and how to give it one. */
export const noValue = (name: string, environment: Environment): string =>
  `secret ${name} has no value in ${environment} (wfx secrets set ${name} --env ${environment})`;

export class FlowSecretValues {
  constructor(
    private readonly state: WfxState,
    private readonly secrets: SecretBox,
    /** Mounted secret files backing organization default's secrets (EngineOptions.secretsDir). */
    private readonly secretsDir: string | undefined,
  ) {}

  /**
   * Secret `name`'s value for `organization` in `environment`: the one set over the API, else
   * a mounted file's; null when it has none. Rejects when a value cannot be opened or read.
   */
  async open(organization: string, environment: Environment, name: string): Promise<string | null> {
    const stored = this.state.flowSecrets[organization]?.[environment]?.[name];
    if (stored !== undefined)
      return this.secrets.open(stored.value, flowSecretContext({ organization, environment, name }));
    if (organization === 'default' && this.secretsDir !== undefined)
      return mountedSecret(this.secretsDir, environment, name);
    return null;
  }

  /**
   * The values of the secrets a call or a job names (`byToken`: stand-in -> name), for
   * `organization` in `environment`: each stand-in's value and each value's name (the empty
   * value left out: nothing to hide); or the failure that stops the call or the job.
   */
  async openRefs(
    organization: string,
    environment: Environment,
    byToken: Readonly<Record<string, string>>,
  ): Promise<
    | { ok: true; values: Map<string, string>; named: Map<string, string> }
    | { ok: false; code: 'SECRET_NOT_FOUND' | 'SECRET_UNREADABLE'; message: string }
  > {
    const values = new Map<string, string>();
    const named = new Map<string, string>();
    for (const [token, name] of Object.entries(byToken)) {
      let value: string | null;
      try {
        value = await this.open(organization, environment, name);
      } catch (err) {
        return { ok: false, code: 'SECRET_UNREADABLE', message: `secret ${name}: ${errorMessage(err)}` };
      }
      if (value === null)
        return {
          ok: false,
          code: 'SECRET_NOT_FOUND',
          message: noValue(name, environment),
        };
      values.set(token, value);
      if (value !== '') named.set(value, name);
    }
    return { ok: true, values, named };
  }

  /** When the value set over the API was set (null: none set, perhaps a mounted file). */
  setAt(organization: string, environment: Environment, name: string): string | null {
    return this.state.flowSecrets[organization]?.[environment]?.[name]?.updatedAt ?? null;
  }
}
