/*
 * Uploads to the file store (POST /files) with progress: fetch cannot report an upload's
 * progress, XMLHttpRequest can. Same rules as send(): same origin, the session cookie, a 401
 * leaves for sign-in, a refusal is an ApiError with the error body's code.
 */
import { calls } from '../../shared/api/calls/index.js';
import type { FileView } from '../../shared/api/files.js';
import { jsonOf, refusal } from './http.js';

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
    const put = calls.files.put({ name: file.name || 'upload', organization: options.organization });
    xhr.open(put.method, put.path);
    xhr.withCredentials = true;
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    xhr.upload.onprogress = (e) => options.onProgress?.(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onerror = () => reject(new Error('the upload could not reach the daemon'));
    xhr.onabort = () => reject(new DOMException('the upload was stopped', 'AbortError'));
    xhr.onload = () => {
      const json = jsonOf(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300) return resolve(json as FileView);
      reject(refusal(xhr.status, xhr.statusText, json, false));
    };
    options.signal?.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}
