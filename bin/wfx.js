#!/usr/bin/env node
// Entry point of the wfx CLI: the compiled TypeScript lives in dist/ (built by `npm ci` / `npm run build`).
import module from 'node:module';

// Node 22.8+ keeps the compiled code of these modules between runs (in its own folder under the
// OS temp dir, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off): every command
// and every daemon start loads hundreds of them. Before the first import of them, so imported
// dynamically below. Node 20 has no such cache.
module.enableCompileCache?.();
const { main } = await import('../dist/src/cli/main.js');

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
