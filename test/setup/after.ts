/** Run by tap once the whole suite has finished (package.json's `after`): see daemons.ts. */
import { sweepDaemons } from './daemons.js';

const killed = sweepDaemons();
if (killed.length > 0) console.error(`# killed ${killed.length} daemon(s) a test left running: ${killed.join(', ')}`);
