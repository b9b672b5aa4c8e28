/* The daemon's operations over the API (WfxClient.admin): backups, the database's daemons, the secrets keys, the audit trail. */
import type {
  AuditListQuery,
  AuditPage,
  BackupReport,
  ClusterList,
  SecretsKeyReport,
  SecretsRotated,
} from '../shared/api/index.js';
import { withQuery, type ApiClient } from './http.js';

/** WfxClient.admin: routes of the daemon's operator (a system admin key), one method each. */
export function adminApi(http: ApiClient) {
  return {
    /** POST /admin/backup: a consistent copy of the data directory on the daemon's host. Throws FORBIDDEN, VALIDATION_ERROR, BACKUP_TARGET_INVALID, BACKUP_TARGET_NOT_EMPTY, BACKUP_FAILED. */
    backup: (directory: string): Promise<BackupReport> =>
      http.request<BackupReport>('POST', '/admin/backup', { directory }),
    /** GET /admin/cluster: the daemons on the database (`--store` only; else NOT_FOUND). Throws FORBIDDEN, SERVICE_UNAVAILABLE. */
    cluster: (): Promise<ClusterList> => http.get<ClusterList>('/admin/cluster'),
    /** GET /admin/secrets: the keys that encrypt stored secrets (ids, where kept, what each seals). Throws FORBIDDEN. */
    secrets: (): Promise<SecretsKeyReport> => http.get<SecretsKeyReport>('/admin/secrets'),
    /** POST /admin/secrets/rotate: every stored secret sealed again with a new key (or `keyId`). Throws FORBIDDEN, VALIDATION_ERROR, SECRETS_KEY_MISSING. */
    rotateSecrets: (keyId?: string): Promise<SecretsRotated> =>
      http.request<SecretsRotated>('POST', '/admin/secrets/rotate', { keyId }),
    /** GET /admin/audit: audit records, newest first; follow `nextCursor`. Throws FORBIDDEN, VALIDATION_ERROR (a cursor swept or not this list's). */
    audit: (query: AuditListQuery = {}): Promise<AuditPage> => http.get<AuditPage>(withQuery('/admin/audit', query)),
  };
}
