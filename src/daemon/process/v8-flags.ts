import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring in this process. Executions that wait (filled by
 * starts, or read from the snapshot) live long, so V8 learns to allocate the objects of the code
 * that builds executions straight in the old generation; the same code then builds short-lived
 * executions (a flow without waits, a resumed one), whose old-generation objects die at once but
 * keep the young objects they point to alive for the scavenger until the next full GC
 * (docs/decisions/018-pretenuring-off.md). Set at run time rather than
 * on the command line so that a foreground daemon gets it too (NODE_OPTIONS takes only a few V8
 * flags, not this one); it only changes where later allocations go.
 */
export function turnOffPretenuring(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
