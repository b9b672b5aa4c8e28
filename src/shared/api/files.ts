/* The file store (/files): uploads, downloads and listings of an organization's files. Answers are types only. */
import { Type, type Static } from './schema.js';
import { Name, PageFields } from './common.js';

/** A file id: `file_` and 32 hex digits. */
export const FILE_ID_PATTERN = '^file_[0-9a-f]{32}$';

const FileId = Type.String({ pattern: FILE_ID_PATTERN });

/** Querystring of POST /files: the file's name (default `upload`), and for system keys its organization. */
export const UploadQuery = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    organization: Type.Optional(Name),
  },
  { additionalProperties: false },
);
export type UploadQuery = Static<typeof UploadQuery>;

/** Path parameters of /files/{fileId}. */
export const FileParams = Type.Object({ fileId: FileId });
export type FileParams = Static<typeof FileParams>;

/** Querystring of GET /files: newest first, a page at a time. */
export const FileListQuery = Type.Object(
  {
    ...PageFields(1000, 100),
    organization: Type.Optional(Name),
  },
  { additionalProperties: false },
);
export type FileListQuery = Static<typeof FileListQuery>;

/** A stored file's metadata: what POST /files answers, what GET /files lists. */
export interface FileView {
  readonly fileId: string;
  readonly organization: string;
  readonly name: string;
  readonly mimeType: string;
  readonly bytes: number;
  /** Hex SHA-256 of the content (also the download's ETag). */
  readonly sha256: string;
  readonly createdAt: string;
  /** When retention removes it unless a running execution still refers to it (then it is kept longer). */
  readonly expiresAt: string;
}

/** Answer of GET /files. */
export interface FilePage {
  readonly items: readonly FileView[];
  readonly nextCursor: string | null;
}

/** Answer of GET /files/limits: what an upload may be (a client checks before it sends). */
export interface FileLimits {
  /** The largest file POST /files takes, in bytes (`--max-file-size`). */
  readonly maxBytes: number;
}

/** Answer of DELETE /files/{fileId}. */
export interface FileDeleted {
  readonly fileId: string;
  readonly deleted: true;
}
