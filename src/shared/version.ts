import { readFileSync } from 'node:fs';

/** wfx's version, from package.json (this file runs from dist/src/shared/). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
