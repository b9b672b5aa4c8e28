/** What end-to-end tests of agents share: a scripted model registered with a real daemon, and a SIGKILL seen through. */
import type { Test } from 'tap';
import type { CliResult } from './cli.js';
import { eventually } from './eventually.js';
import { startOpenAiServer, type OpenAiServer } from './openai-server.js';

/** A scripted OpenAI-compatible server, registered (through `run`, the CLI) as the organization's default provider. */
export async function scriptedModel(t: Test, run: (args: string[]) => Promise<CliResult>): Promise<OpenAiServer> {
  const server = await startOpenAiServer();
  t.teardown(() => server.close());
  const created = await run([
    'ai',
    'providers',
    'create',
    'scripted',
    '--kind',
    'openai-compatible',
    '--base-url',
    server.baseUrl,
    '--model',
    'm',
    '--default',
  ]);
  t.equal(created.code, 0, created.stderr);
  return server;
}

/** SIGKILLs process `pid` and resolves once it is gone. */
export async function kill(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  await eventually(`process ${pid} is gone`, () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
}
