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

  /** When the value set over the API was set (null: none set, perhaps a mounted file). */
  setAt(organization: string, environment: Environment, name: string): string | null {
    return this.state.flowSecrets[organization]?.[environment]?.[name]?.updatedAt ?? null;
  }
}
