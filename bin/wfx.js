#!/usr/bin/env node
// Entry point of the wfx CLI: the compiled TypeScript lives in dist/ (built by `npm ci` / `npm run build`).
import { main } from '../dist/src/cli/main.js';

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
