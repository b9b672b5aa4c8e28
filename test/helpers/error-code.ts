import { isWfxError } from '../../src/shared/errors.js';

/**
 * The WfxError code `p` rejects with; null when it resolves. Any other rejection is thrown on,
 * so that the test fails on it rather than comparing its text.
 */
export async function codeOf(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (isWfxError(err)) return err.code;
    throw err;
  }
}

/** The WfxError code `fn` throws; null when it returns. Any other throw is thrown on. */
export function codeOfCall(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (isWfxError(err)) return err.code;
    throw err;
  }
}
