#!/usr/bin/env node
// Entry point of the wfx CLI: the compiled TypeScript lives in dist/ (built by `npm ci` / `npm run build`).
import { main } from '../dist/src/cli/main.js';

// A reader that went away (`wfx ai providers list | head -1`) ends the command quietly, as it
// does Unix tools: not an unhandled error with a stack.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(
      `INTERNAL_ERROR: ${err && err.stack ? err.stack : err}\nThis is a bug in wfx; please report it.\n`,
    );
    process.exitCode = 70;
  },
);
