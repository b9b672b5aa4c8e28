import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {} from '@fastify/swagger'; // schema.tags, schema.summary
import type { Readable } from 'node:stream';
import {
  FileListQuery,
  FileParams,
  UploadQuery,
  type FileDeleted,
  type FileLimits,
  type FilePage,
  type FileView,
  type WithDefaults,
} from '../../../shared/api/index.js';
import { WfxError } from '../../../shared/errors.js';
import type { FileStore } from '../../files/file-store.js';
import type { StoredFile } from '../../state/state.js';
import { actingOrganization, listedOrganization } from '../organization.js';

export interface FileRouteDeps {
  readonly files: FileStore;
}

/** A content type as given (its parameters dropped), or octet-stream. */
function mimeTypeOf(header: string | undefined): string {
  const type = (header ?? '').split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type : 'application/octet-stream';
}

/** A file's metadata as the API shows it. */
export function fileView(f: StoredFile): FileView {
  return {
    fileId: f.fileId,
    organization: f.organization,
    name: f.name,
    mimeType: f.mimeType,
    bytes: f.bytes,
    sha256: f.sha256,
    createdAt: f.createdAt,
    expiresAt: f.expiresAt,
  };
}

/** `filename="..."` for Content-Disposition: quotes and controls out, the UTF-8 name in `filename*`. */
function disposition(name: string): string {
  const plain = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${plain}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * /files: an organization's file store. POST streams the request body to a blob (any content
 * type, up to the store's limit) and answers once it is durable; GET /files/{id} downloads;
 * /meta and the list give metadata. Another organization's file is 404 (FILE_NOT_FOUND).
 */
export function fileRoutes(fastify: FastifyInstance, deps: FileRouteDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { files } = deps;
  const tags = ['files'];
  // Uploads are bytes, not JSON: every content type reaches the handler as the request stream.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  const found = (organization: string | null, fileId: string): StoredFile => {
    const file = files.get(organization, fileId);
    if (!file) throw new WfxError('FILE_NOT_FOUND', `no file ${fileId}`);
    return file;
  };

  app.post('/files', {
    config: { auth: { permission: 'WORKFLOW_EXECUTE' } },
    bodyLimit: files.maxBytes,
    schema: {
      tags,
      summary: 'Upload a file: the request body is its content, Content-Type its type; answers once durable',
      querystring: UploadQuery,
    },
    handler: async (request, reply) => {
      const organization = actingOrganization(request.caller!, request.query.organization);
      const declared = Number(request.headers['content-length']);
      if (Number.isFinite(declared) && declared > files.maxBytes)
        throw new WfxError('PAYLOAD_TOO_LARGE', `a file may hold ${files.maxBytes} bytes at most`);
      const body = request.body as Readable | undefined;
      const file = await files.put({
        organization,
        name: request.query.name ?? 'upload',
        mimeType: mimeTypeOf(request.headers['content-type']),
        content: body ?? Buffer.alloc(0),
      });
      return reply.code(201).send(fileView(file));
    },
  });

  app.get('/files', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: { tags, summary: "The organization's files, newest first, a page at a time", querystring: FileListQuery },
    handler: async (request): Promise<FilePage> => {
      const query = request.query as WithDefaults<typeof request.query, 'limit'>;
      const organization = listedOrganization(request.caller!, query.organization);
      const all = Object.values(files.list())
        .filter((f) => organization === null || f.organization === organization)
        .sort((a, b) =>
          a.createdAt === b.createdAt ? (a.fileId < b.fileId ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
        );
      const from = query.cursor === undefined ? 0 : all.findIndex((f) => f.fileId === query.cursor) + 1;
      if (query.cursor !== undefined && from === 0)
        throw new WfxError('VALIDATION_ERROR', 'cursor is not one this list gave');
      const items = all.slice(from, from + query.limit).map(fileView);
      return { items, nextCursor: from + query.limit < all.length ? items.at(-1)!.fileId : null };
    },
  });

  app.get('/files/limits', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: { tags, summary: 'What an upload may be: the largest file POST /files takes' },
    handler: async (): Promise<FileLimits> => ({ maxBytes: files.maxBytes }),
  });

  app.get('/files/:fileId', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: { tags, summary: "Download a file's content", params: FileParams },
    handler: async (request, reply) => {
      const caller = request.caller!;
      const file = found(caller.system ? null : caller.organization!, request.params.fileId);
      const content = await files.read(file);
      return reply
        .header('content-type', file.mimeType)
        .header('content-length', String(file.bytes))
        .header('etag', `"${file.sha256}"`)
        .header('content-disposition', disposition(file.name))
        .send(content);
    },
  });

  app.get('/files/:fileId/meta', {
    config: { auth: { permission: 'WORKFLOW_READ' } },
    schema: { tags, summary: "A file's metadata", params: FileParams },
    handler: async (request): Promise<FileView> => {
      const caller = request.caller!;
      return fileView(found(caller.system ? null : caller.organization!, request.params.fileId));
    },
  });

  app.delete('/files/:fileId', {
    config: { auth: { permission: 'ADMIN' } },
    schema: { tags, summary: 'Delete a file (its content goes once no file shares it)', params: FileParams },
    handler: async (request): Promise<FileDeleted> => {
      const caller = request.caller!;
      const file = found(caller.system ? null : caller.organization!, request.params.fileId);
      await files.delete(file.fileId);
      return { fileId: file.fileId, deleted: true };
    },
  });
}
