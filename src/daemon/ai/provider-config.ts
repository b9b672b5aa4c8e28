/**
 * What makes a provider registration usable before any model is asked: the fields its kind
 * needs and no others, a base URL that can carry no secret, a model file that is a GGUF file.
 * The admin API checks every create and update with it.
 */
import { open } from 'node:fs/promises';
import { basename, isAbsolute } from 'node:path';
import { WfxError } from '../../shared/errors.js';
import type { AiProvider } from '../state/state.js';

/** The fields only one kind has. */
const ONLY: Record<AiProvider['kind'], ReadonlyArray<keyof AiProvider>> = {
  'openai-compatible': ['baseUrl', 'apiKey'],
  local: ['modelPath', 'threads', 'contextSize'],
};

/** A local provider's model label when none is given: the file's name without `.gguf`. Pure. */
export function modelLabelOf(modelPath: string): string {
  return basename(modelPath).replace(/\.gguf$/i, '') || basename(modelPath);
}

/**
 * Throws VALIDATION_ERROR naming the first problem of `p` for its kind: a field of the other
 * kind, a missing `baseUrl` or `model` (openai-compatible), a base URL that is not http(s) or
 * carries credentials, a query or a fragment (they would end up in log lines), a `modelPath`
 * that is not absolute or not a readable GGUF file (local). Never puts the API key in a message.
 */
export async function checkProvider(p: AiProvider): Promise<void> {
  const other = p.kind === 'local' ? 'openai-compatible' : 'local';
  for (const field of ONLY[other])
    if (p[field] !== undefined)
      throw new WfxError('VALIDATION_ERROR', `${field} is for ${other} providers; a ${p.kind} provider has none`);
  if (p.kind === 'openai-compatible') {
    if (p.baseUrl === undefined)
      throw new WfxError('VALIDATION_ERROR', 'an openai-compatible provider needs a baseUrl');
    checkBaseUrl(p.baseUrl);
    return;
  }
  if (p.modelPath === undefined) throw new WfxError('VALIDATION_ERROR', 'a local provider needs a modelPath');
  await checkModelFile(p.modelPath);
}

function checkBaseUrl(text: string): void {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WfxError('VALIDATION_ERROR', 'baseUrl is not a URL (e.g. https://api.openai.com/v1)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new WfxError('VALIDATION_ERROR', `baseUrl must be http or https, not ${url.protocol.slice(0, 20)}`);
  if (url.username !== '' || url.password !== '')
    throw new WfxError('VALIDATION_ERROR', 'baseUrl must not carry credentials: give the key as apiKey');
  // A query goes along with every request (Azure-style gateways need `api-version`); messages
  // and log lines show only the origin and path.
  if (url.hash !== '') throw new WfxError('VALIDATION_ERROR', 'baseUrl must not have a fragment');
}

/** GGUF files begin with these four bytes. */
const GGUF_MAGIC = Buffer.from('GGUF', 'latin1');

async function checkModelFile(path: string): Promise<void> {
  if (!isAbsolute(path)) throw new WfxError('VALIDATION_ERROR', `modelPath must be an absolute path, not ${path}`);
  let head: Buffer;
  try {
    const file = await open(path, 'r');
    try {
      if (!(await file.stat()).isFile()) throw new WfxError('VALIDATION_ERROR', `modelPath ${path} is not a file`);
      head = Buffer.alloc(4);
      await file.read(head, 0, 4, 0);
    } finally {
      await file.close();
    }
  } catch (err) {
    if (err instanceof WfxError) throw err;
    throw new WfxError(
      'VALIDATION_ERROR',
      `modelPath ${path} cannot be read by the daemon (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
  if (!head.equals(GGUF_MAGIC)) throw new WfxError('VALIDATION_ERROR', `modelPath ${path} is not a GGUF model file`);
}
