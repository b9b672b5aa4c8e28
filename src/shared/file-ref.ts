/**
 * A reference to a file of the file store, as flows and task answers write it: the fileId
 * itself (`file_` and 32 hex digits), or an object holding it (`{fileId}`, such as a voiceTask's
 * result or a file input's value).
 */

const FILE_ID = /^file_[0-9a-f]{32}$/;

/** The fileId `ref` names, or null when it names none. Pure. */
export function fileIdOf(ref: unknown): string | null {
  if (typeof ref === 'string') return FILE_ID.test(ref) ? ref : null;
  if (typeof ref === 'object' && ref !== null && !Array.isArray(ref)) {
    const id = (ref as { fileId?: unknown }).fileId;
    return typeof id === 'string' && FILE_ID.test(id) ? id : null;
  }
  return null;
}
