import { errorMessage, WfxError } from '../shared/errors.js';

/** An error as the TUI shows it: `CODE: message`, the way the CLI prints it; never a stack. */
export function errorText(err: unknown): string {
  if (err instanceof WfxError) return `${err.code}: ${err.message}`;
  return `ERROR: ${errorMessage(err)}`;
}

/** The error code of `err` (the API's), or null when it is not a WfxError. */
export function errorCode(err: unknown): string | null {
  return err instanceof WfxError ? err.code : null;
}
