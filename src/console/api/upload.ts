/*
 * Uploads to the file store (POST /files) with progress: fetch cannot report an upload's
 * progress, XMLHttpRequest can. Same rules as api(): same origin, the session cookie, a 401
 * leaves for sign-in, a refusal is an ApiError with the error body's code.
 */
import type { ErrorBody } from '../../shared/api/common.js';
import type { FileView } from '../../shared/api/files.js';
import { ApiError, toSignIn } from './http.js';

/** Options of `uploadFile`. */
export interface UploadOptions {
  /** Called as bytes go out: how many of how many. */
  readonly onProgress?: (sent: number, total: number) => void;
  readonly signal?: AbortSignal;
  /** The organization whose file store takes it (a system session's default is `default`). */
  readonly organization?: string;
}

/**
 * Uploads `file` as `POST /files?name=<its name>` (its type as Content-Type) and resolves with
 * the stored file's metadata. Rejects with ApiError for an answer that is not 2xx (413
 * PAYLOAD_TOO_LARGE over the daemon's limit; on a 401 it also leaves for sign-in), with an
 * Error on a network failure, and with an AbortError DOMException when `signal` aborts.
 */
export function uploadFile(file: File, options: UploadOptions = {}): Promise<FileView> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new DOMException('the upload was stopped', 'AbortError'));
    const xhr = new XMLHttpRequest();
    const org = options.organization === undefined ? '' : `&organization=${encodeURIComponent(options.organization)}`;
    xhr.open('POST', `/files?name=${encodeURIComponent(file.name || 'upload')}${org}`);
    xhr.withCredentials = true;
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    xhr.upload.onprogress = (e) => options.onProgress?.(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onerror = () => reject(new Error('the upload could not reach the daemon'));
    xhr.onabort = () => reject(new DOMException('the upload was stopped', 'AbortError'));
    xhr.onload = () => {
      let json: unknown = undefined;
      try {
        json = xhr.responseText === '' ? undefined : JSON.parse(xhr.responseText);
      } catch {
        // Not JSON (a proxy's page): the status speaks for it.
      }
      if (xhr.status >= 200 && xhr.status < 300) return resolve(json as FileView);
      if (xhr.status === 401) toSignIn();
      const body = json as Partial<ErrorBody> | undefined;
      reject(
        new ApiError(
          xhr.status,
          body?.error ?? `HTTP_${xhr.status}`,
          body?.message ?? xhr.statusText,
          body?.details as Readonly<Record<string, unknown>> | undefined,
        ),
      );
    };
    options.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}
