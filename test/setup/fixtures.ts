/**
 * Imported first by every test file that makes fixtures (test/cli/fixtures-isolation.test.ts
 * checks that each does; a `--import` preload would reach the child processes that
 * node-llama-cpp forks with this process's arguments, from other directories): moves `t.testdir()` fixtures
 * from tap's default, `.tap/fixtures` under the project, to a directory of this process's own
 * under the OS temp dir. Under the project, a command run in a fixture would search upward for
 * the nearest `.wfx` and find the developer's own (the quick start's daemon holds it locked):
 * tests must never reach a user's data directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import t from 'tap';

const root = mkdtempSync(join(tmpdir(), 'wfx-test-'));
// Subtests name theirs after this one's (`<root>/<file>-<subtest>`), so all of them move.
t.testdirName = join(root, basename(t.testdirName));
process.once('exit', () => rmSync(root, { recursive: true, force: true }));
