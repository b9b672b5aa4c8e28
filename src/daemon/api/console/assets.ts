/*
 * The browser console's files, served by the daemon: index.html for the console's page paths
 * (the app routes in the browser), the hashed assets under /assets/ cached for good. Read from
 * the build (`npm run build` writes dist/console/) once, on the first request for them, and kept
 * in memory with their ETags and gzipped copies: the built console is small. Every answer
 * carries a Content-Security-Policy that allows only this origin's scripts and styles (none
 * inline) and forbids framing.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WfxError } from '../../../shared/errors.js';
import { CONSOLE_HEADERS } from './html-answers.js';

/** Where `npm run build` writes the console: dist/console/, from this module's dist/src/daemon/api/console/. */
export const BUILT_CONSOLE = fileURLToPath(new URL('../../../../console/', import.meta.url));

/** The paths the console's router owns: each answers index.html. */
export const CONSOLE_PAGES = [
  '/',
  '/sign-in',
  '/executions',
  '/executions/*',
  '/failures',
  '/compare',
  '/flows',
  '/flows/*',
  '/manage',
  '/manage/*',
  '/bulk',
  '/bulk/*',
  '/triggers',
  '/triggers/*',
  '/tasks',
  '/tasks/*',
] as const;

/** Content types by extension; a file of another extension is not served. */
const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Worth gzipping: text the browser loads (source maps are fetched by developer tools only). */
const COMPRESSED = new Set(['.js', '.css', '.html', '.svg']);

/** A hashed asset's name: letters, digits, dots, dashes and underscores only (no separators, no encoding). */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** One file as served: its bytes, their gzipped copy where worth it, its strong ETag and type. */
interface ServedFile {
  readonly body: Buffer;
  readonly gzip: Buffer | null;
  /** The ETag's opaque part (quoted on the wire; `-gz` names the gzipped representation). */
  readonly tag: string;
  readonly type: string;
}

/** The built console, in memory. */
interface Built {
  readonly index: ServedFile;
  readonly assets: ReadonlyMap<string, ServedFile>;
}

function served(body: Buffer, ext: string): ServedFile {
  const tag = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  const gzip = COMPRESSED.has(ext) && body.length > 1024 ? gzipSync(body, { level: 9 }) : null;
  return { body, gzip, tag, type: TYPES[ext]! };
}

/**
 * The console built in `dir` (index.html and assets/), read whole; null when it is not built.
 * Only regular files directly in assets/ with a known extension are kept, each resolved and
 * checked to be inside assets/.
 */
function readBuilt(dir: string): Built | null {
  const indexPath = join(dir, 'index.html');
  if (!existsSync(indexPath)) return null;
  const assetsDir = resolve(dir, 'assets');
  const assets = new Map<string, ServedFile>();
  for (const name of existsSync(assetsDir) ? readdirSync(assetsDir) : []) {
    const file = resolve(assetsDir, name);
    const ext = extname(name);
    if (!ASSET_NAME.test(name) || !file.startsWith(assetsDir + sep) || TYPES[ext] === undefined) continue;
    if (!lstatSync(file).isFile()) continue;
    assets.set(name, served(readFileSync(file), ext));
  }
  return { index: served(readFileSync(indexPath), '.html'), assets };
}

/** Whether the request takes gzip (`Accept-Encoding` names it, or `*`, without q=0). */
function takesGzip(request: FastifyRequest): boolean {
  const header = request.headers['accept-encoding'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** Whether If-None-Match names `file` (either representation: the content is the same). */
function notModified(request: FastifyRequest, file: ServedFile): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === `"${file.tag}"` || tag === `"${file.tag}-gz"`;
  });
}

/** Answers `file` (gzipped when the client takes it), or 304 when the client has it. */
function send(request: FastifyRequest, reply: FastifyReply, file: ServedFile, cacheControl: string) {
  void reply.headers(CONSOLE_HEADERS).header('cache-control', cacheControl).header('vary', 'Accept-Encoding');
  const gzip = file.gzip !== null && takesGzip(request);
  void reply.header('etag', `"${file.tag}${gzip ? '-gz' : ''}"`);
  if (notModified(request, file)) return reply.code(304).send();
  void reply.type(file.type);
  if (gzip) void reply.header('content-encoding', 'gzip');
  return reply.send(gzip ? file.gzip : file.body);
}

/** Options of consoleRoutes. */
export interface ConsoleRouteOptions {
  /** Where the built console is (index.html, assets/); default BUILT_CONSOLE. */
  readonly dir?: string;
}

/**
 * The console's routes: each of CONSOLE_PAGES answers index.html (no-cache: it names the
 * assets of the build in use); `/assets/<name>` answers that asset (cached for a year,
 * immutable: its name carries its hash), or 404 NOT_FOUND for any name that is not a file of the
 * build (an encoded character, a separator or `..` never is). No credential is needed: the page
 * itself holds no data. Before the console is built, the pages answer 503 CONSOLE_NOT_BUILT.
 * None of them is in /openapi.json.
 */
export function consoleRoutes(app: FastifyInstance, options: ConsoleRouteOptions = {}): void {
  const dir = options.dir ?? BUILT_CONSOLE;
  let built: Built | null = null;
  /** The console as built; read once it exists (a daemon started before `npm run build` finds it after). */
  const load = (): Built | null => (built ??= readBuilt(dir));
  const route = { config: { auth: { permission: 'none' as const } }, schema: { hide: true } };

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    void reply.headers(CONSOLE_HEADERS);
    const b = load();
    if (!b)
      throw new WfxError('CONSOLE_NOT_BUILT', 'the console is not built: run `npm run build` in the wfx checkout');
    return send(request, reply, b.index, 'no-cache');
  };
  for (const url of CONSOLE_PAGES) app.get(url, { ...route, handler: page });

  app.get('/assets/*', {
    ...route,
    handler: async (request, reply) => {
      void reply.headers(CONSOLE_HEADERS);
      // The name as the request wrote it: the router's decoded parameter would turn %2F into a separator.
      const name = request.url.split('?')[0]!.slice('/assets/'.length);
      const file = ASSET_NAME.test(name) && !name.includes('..') ? load()?.assets.get(name) : undefined;
      if (!file) throw new WfxError('NOT_FOUND', `no console asset ${name}`);
      return send(request, reply, file, 'public, max-age=31536000, immutable');
    },
  });
}
