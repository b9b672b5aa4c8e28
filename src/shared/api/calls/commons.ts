/*
 * The calls of what executions share and of the daemon's operator: memory, files, jobs, health,
 * backups, the database's daemons, the secrets keys, the audit trail.
 */
import type {
  ActivatedJobs,
  ActivateJobsBody,
  AuditListQuery,
  AuditPage,
  BackupReport,
  ClusterList,
  CompletedJobs,
  CompleteJobBody,
  CompleteJobsBody,
  DomainHealthList,
  FailJobBody,
  FileDeleted,
  FileLimits,
  FileListQuery,
  FilePage,
  FileView,
  Health,
  HeartbeatJobBody,
  JobAnswer,
  JobList,
  JobListQuery,
  MemoryDeleted,
  MemoryEntryView,
  MemoryListQuery,
  MemoryNamespaces,
  MemoryPage,
  SecretsKeyReport,
  SecretsRotated,
} from '../index.js';
import type { Org } from './catalogue.js';
import { call, get, path, post, withQuery } from './call.js';

export const memory = {
  /** GET /admin/memory: live entries (no values), by namespace then key; follow `nextCursor`. Throws VALIDATION_ERROR (a cursor it did not give). */
  list: (query: MemoryListQuery = {}) => get<MemoryPage>(withQuery('/admin/memory', query)),
  /** GET /admin/memory/namespaces: each namespace with its live entries' count and bytes. */
  namespaces: (query: Org = {}) => get<MemoryNamespaces>(withQuery('/admin/memory/namespaces', query)),
  /** GET /admin/memory/{namespace}/{key}. Throws NOT_FOUND (missing or past its TTL). */
  get: (namespace: string, key: string, query: Org = {}) =>
    get<MemoryEntryView>(withQuery(path`/admin/memory/${namespace}/${key}`, query)),
  /** DELETE /admin/memory/{namespace}/{key}. Throws NOT_FOUND. */
  delete: (namespace: string, key: string, query: Org = {}) =>
    call<MemoryDeleted>('DELETE', withQuery(path`/admin/memory/${namespace}/${key}`, query)),
};

/** The file store; the content goes up and down through the transport (WfxClient.files.put, .content). */
export const files = {
  /**
   * POST /files: the call of an upload, without its content (the transport sends the bytes with
   * their type). Throws PAYLOAD_TOO_LARGE (over the daemon's --max-file-size), FORBIDDEN.
   */
  put: (query: { name?: string; organization?: string } = {}) => call<FileView>('POST', withQuery('/files', query)),
  /** GET /files/limits: the largest file POST /files takes. */
  limits: () => get<FileLimits>('/files/limits'),
  /** GET /files: newest first; follow `nextCursor`. */
  list: (query: FileListQuery = {}) => get<FilePage>(withQuery('/files', query)),
  /** GET /files/{fileId}/meta. Throws FILE_NOT_FOUND (also another organization's). */
  meta: (fileId: string) => get<FileView>(path`/files/${fileId}/meta`),
  /** GET /files/{fileId}: the content (a transport reads it as bytes). Throws FILE_NOT_FOUND. */
  content: (fileId: string) => get<never>(path`/files/${fileId}`),
  /** DELETE /files/{fileId} (ADMIN). Throws FILE_NOT_FOUND. */
  delete: (fileId: string) => call<FileDeleted>('DELETE', path`/files/${fileId}`),
};

export const jobs = {
  /**
   * POST /jobs/activate: up to `maxJobs` jobs locked to `worker`, waiting up to `requestTimeout`
   * ms for some (a long poll). Throws DOMAIN_NOT_FOUND, FORBIDDEN.
   */
  activate: (body: ActivateJobsBody) => post<ActivatedJobs>('/jobs/activate', body),
  /** POST /jobs/{key}/complete. Throws JOB_NOT_FOUND, JOB_LOCK_LOST, JOB_OUTPUT_INVALID (the attempt counted as failed). */
  complete: (key: string, body: CompleteJobBody) => post<JobAnswer>(path`/jobs/${key}/complete`, body),
  /**
   * POST /jobs/complete: many jobs completed in one request; one outcome per job, in order
   * (`{key, status: "completed"}`, or the error its own complete would have thrown, as
   * `{key, error, message, details?}`).
   */
  completeMany: (body: CompleteJobsBody) => post<CompletedJobs>('/jobs/complete', body),
  /** POST /jobs/{key}/fail: a failed attempt (retried while attempts are left). Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
  fail: (key: string, body: FailJobBody) => post<JobAnswer>(path`/jobs/${key}/fail`, body),
  /** POST /jobs/{key}/heartbeat: extends the lock. Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
  heartbeat: (key: string, body: HeartbeatJobBody) => post<JobAnswer>(path`/jobs/${key}/heartbeat`, body),
  /** POST /jobs/{key}/release: gives the job back unworked. Throws JOB_NOT_FOUND, JOB_LOCK_LOST. */
  release: (key: string, worker: string) => post<JobAnswer>(path`/jobs/${key}/release`, { worker }),
  /** GET /jobs: waiting jobs, oldest first. */
  list: (query: JobListQuery = {}) => get<JobList>(withQuery('/jobs', query)),
  /** GET /jobs/workers: each domain's jobs and the workers seen lately. */
  workers: (query: Org = {}) => get<DomainHealthList>(withQuery('/jobs/workers', query)),
};

/** GET /health: the daemon serves (and its version). Throws the store's failure (STORE_FAILED) once its store failed. */
export const health = () => get<Health>('/health');

/** The daemon's operator (a system admin key). */
export const operator = {
  /** POST /admin/backup: a consistent copy of the data directory on the daemon's host. Throws FORBIDDEN, VALIDATION_ERROR, BACKUP_TARGET_INVALID, BACKUP_TARGET_NOT_EMPTY, BACKUP_FAILED. */
  backup: (directory: string) => post<BackupReport>('/admin/backup', { directory }),
  /** GET /admin/cluster: the daemons on the database (`--store` only; else NOT_FOUND). Throws FORBIDDEN, SERVICE_UNAVAILABLE. */
  cluster: () => get<ClusterList>('/admin/cluster'),
  /** GET /admin/secrets: the keys that encrypt stored secrets (ids, where kept, what each seals). Throws FORBIDDEN. */
  secrets: () => get<SecretsKeyReport>('/admin/secrets'),
  /** POST /admin/secrets/rotate: every stored secret sealed again with a new key (or `keyId`). Throws FORBIDDEN, VALIDATION_ERROR, SECRETS_KEY_MISSING. */
  rotateSecrets: (keyId?: string) => post<SecretsRotated>('/admin/secrets/rotate', { keyId }),
  /** GET /admin/audit: audit records, newest first; follow `nextCursor`. Throws FORBIDDEN, VALIDATION_ERROR (a cursor swept or not this list's). */
  audit: (query: AuditListQuery = {}) => get<AuditPage>(withQuery('/admin/audit', query)),
};
