import { setFlagsFromString } from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring in this process. Executions that wait (filled by
 * starts, or read from the snapshot) live long, so V8 learns to allocate the objects of the code
 * that builds executions straight in the old generation; the same code then builds short-lived
 * executions (a flow without waits, a resumed one), whose old-generation objects die at once but
 * keep the young objects they point to alive for the scavenger until the next full GC. With
 * 45,000 executions waiting for input, a start load promoted 0.5-1.3 MB per scavenge instead of
 * 0.2 and paused 2.6-3.6 ms instead of 1.2-1.5 (docs/performance.md). Set at run time rather than
 * on the command line so that a foreground daemon gets it too (NODE_OPTIONS takes only a few V8
 * flags, not this one); it only changes where later allocations go.
 */
export function tuneGarbageCollector(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
