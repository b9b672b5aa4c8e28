import type { ErrorCode } from '../shared/errors.js';

/** Exit codes of `wfx` (SPEC.md section 8); CI pipelines branch on them. */
export const EXIT = {
  OK: 0,
  /** The execution Failed, or the command failed for another reason. */
  FAILED: 1,
  USAGE: 2,
  CANCELLED: 3,
  TIMEOUT: 4,
  /** Cannot reach the daemon, or authentication failed. */
  UNREACHABLE: 5,
} as const;

const BY_CODE: Partial<Record<ErrorCode, number>> = {
  USAGE_ERROR: EXIT.USAGE,
  FILE_EXISTS: EXIT.USAGE,
  AMBIGUOUS_ID: EXIT.USAGE,
  VALIDATION_ERROR: EXIT.USAGE,
  FLOW_INVALID: EXIT.USAGE,
  PROJECT_INVALID: EXIT.USAGE,
  EXPRESSION_ERROR: EXIT.USAGE,
  UNAUTHORIZED: EXIT.UNREACHABLE,
  DAEMON_UNREACHABLE: EXIT.UNREACHABLE,
  DAEMON_NOT_RUNNING: EXIT.UNREACHABLE,
};

/** The exit code for an error of `code`. */
export function exitCodeFor(code: ErrorCode): number {
  return BY_CODE[code] ?? EXIT.FAILED;
}
