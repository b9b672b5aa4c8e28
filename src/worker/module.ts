/** Handlers from a JavaScript module: one exported function per action (`export async function charge(input, job)`). */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { JobHandler } from './worker.js';

/**
 * The functions a module exports, by name (a default export that is an object of functions
 * counts too; a named export wins), and its `domain` export if it names one. Throws when the
 * module does not load or exports no function.
 */
export async function loadHandlers(
  file: string,
  cwd: string,
): Promise<{ readonly handlers: Record<string, JobHandler>; readonly domain: string | undefined }> {
  const mod = (await import(pathToFileURL(resolve(cwd, file)).href)) as Record<string, unknown>;
  const handlers: Record<string, JobHandler> = {};
  const fromDefault =
    typeof mod.default === 'object' && mod.default !== null ? (mod.default as Record<string, unknown>) : {};
  for (const source of [fromDefault, mod])
    for (const [name, value] of Object.entries(source))
      if (typeof value === 'function' && name !== 'default') handlers[name] = value as JobHandler;
  if (Object.keys(handlers).length === 0) throw new Error(`${file} exports no function: export one per action`);
  const domain = typeof mod.domain === 'string' ? mod.domain : undefined;
  return { handlers, domain };
}
