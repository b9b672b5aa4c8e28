import type { Test } from 'tap';
import type { AiRunner } from '../../src/daemon/ai/types.js';
import { apiHarness, type ApiHarness } from './api.js';
import { wfxIn, type CliResult } from './cli.js';

/** `wfx` run in-process against a served daemon with one key: `args` and, optionally, stdin. */
export type ServedWfx = (args: string[], stdin?: string) => Promise<CliResult>;

/**
 * The daemon's server (apiHarness, with `ai` as its model runner when given) listening on
 * 127.0.0.1, port 0, and `wfx` run in-process against it from a test directory (`cwd`): `wfx`
 * with an admin's key of `organization` (default `acme`; null: a system key), `wfxAs` for an
 * admin of another organization. The server closes with the harness when `t` ends.
 */
export async function served(t: Test, options: { readonly ai?: AiRunner; readonly organization?: string | null } = {}) {
  const h: ApiHarness = await apiHarness(t, options.ai ? { ai: options.ai } : {});
  const key = await h.key('admin', options.organization === undefined ? 'acme' : options.organization);
  const url = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const cwd = t.testdir({});
  const as =
    (apiKey: string): ServedWfx =>
    (args, stdin) =>
      wfxIn(['--url', url, '--api-key', apiKey, ...args], { cwd, stdin });
  return {
    h,
    url,
    cwd,
    wfx: as(key.apiKey),
    /** `wfx` with a new admin key of `organization`. */
    wfxAs: async (organization: string): Promise<ServedWfx> => as((await h.key('admin', organization)).apiKey),
  };
}
