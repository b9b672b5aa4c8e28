import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import type { WfxClient } from '../../client/client.js';
import { STATE } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import type { FlowDefinition } from '../../shared/flow/types.js';
import { clientFor } from '../api.js';
import type { CliContext } from '../context.js';
import { executionIdOf } from '../resolve.js';
import { recordedCase, type Fetched } from '../test-record.js';
import { flowFileName } from './init.js';

/** Executions under the recorded one fetched at most (children, tool calls, loop iterations). */
const MAX_UNDER = 1000;

/** `wfx test record ID`: an ended execution written as a flow test case (test-record.ts). */
export function registerTestRecord(test: Command, ctx: CliContext): void {
  test
    .command('record')
    .description(
      'write an ended execution as a test case: its start, answers, events, work results as mocks, path and end',
    )
    .argument('<id>', 'the processInstanceId (or a unique prefix of it)')
    .option('--out <file>', 'the test file to write, or to add the case to (default: <flow file>.test.yaml)')
    .option('--flow <file>', "the flow's file, as the test file names it; written from the daemon when missing")
    .option('--name <name>', 'the case name (default: "recorded <id>")')
    .addHelpText(
      'after',
      '\nSecrets are not copied: each {env.NAME} the flow uses gets a placeholder value.\n' +
        '\nExample:\n  $ wfx test record 01a2174a --out flows/order-approval.test.yaml && wfx test flows/',
    )
    .action(async (idArg: string, opts: { out?: string; flow?: string; name?: string }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const id = await executionIdOf(client, idArg);
      const root = await fetched(client, id);
      if (root.view.stateCd === STATE.RUNNING)
        throw new WfxError('INSTANCE_NOT_ENDED', `execution ${id} is still running: record it once it has ended`);
      const under = await fetchedUnder(client, root);
      const flows = new Map<string, FlowDefinition>();
      for (const f of [root, ...under])
        if (!flows.has(f.view.processId))
          flows.set(f.view.processId, (await client.flows.get(f.view.processId, f.view.processVersion)).definition);
      const flowFile = resolve(ctx.cwd, opts.flow ?? flowFileName(root.view.processName));
      const out = resolve(ctx.cwd, opts.out ?? flowFile.replace(/\.(ya?ml|json)$/i, '') + '.test.yaml');
      const written: string[] = [];
      const write = async (file: string, definition: FlowDefinition): Promise<void> => {
        if (existsSync(file)) return;
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, stringify(definition), { flag: 'wx' });
        written.push(relative(ctx.cwd, file));
      };
      await write(flowFile, flows.get(root.view.processId)!);
      // The other flows (called, or an agent's tools) beside it, named after themselves.
      const others: string[] = [];
      for (const [processId, definition] of flows) {
        if (processId === root.view.processId) continue;
        const file = resolve(dirname(flowFile), flowFileName(definition.name));
        await write(file, definition);
        others.push(relative(dirname(out), file));
      }
      const recorded = recordedCase({ root, under, flows }, opts.name ?? `recorded ${id}`);
      await mkdir(dirname(out), { recursive: true });
      const existing = existsSync(out) ? await readFile(out, 'utf8') : null;
      if (existing === null) {
        const file = {
          flow: relative(dirname(out), flowFile),
          ...(others.length > 0 && { flows: others }),
          ...(Object.keys(recorded.env).length > 0 && { env: recorded.env }),
          cases: [recorded.case],
        };
        await writeFile(out, `# Recorded from execution ${id} (wfx test record).\n${stringify(file)}`);
      } else {
        // Another case of a test file that exists: appended under its `cases:`, the rest as it is.
        const item = stringify([
          { ...recorded.case, ...(Object.keys(recorded.env).length > 0 && { env: recorded.env }) },
        ]);
        const indented = item.replace(/^/gm, '  ').replace(/ +$/gm, '');
        await writeFile(out, `${existing.replace(/\n*$/, '\n')}${indented}`);
      }
      written.push(relative(ctx.cwd, out));
      ctx.stdout.write(`recorded ${id} as "${recorded.case.name as string}": ${written.join(', ')}\n`);
    });
}

async function fetched(client: WfxClient, id: string): Promise<Fetched> {
  const [view, logs] = await Promise.all([client.instances.get(id), client.instances.logs(id)]);
  return { view, logs };
}

/** The executions under `root`, depth first (at most MAX_UNDER). */
async function fetchedUnder(client: WfxClient, root: Fetched): Promise<Fetched[]> {
  const out: Fetched[] = [];
  const queue = root.view.nodes.flatMap((n) => n.childInstanceIds ?? []);
  while (queue.length > 0 && out.length < MAX_UNDER) {
    const f = await fetched(client, queue.shift()!);
    out.push(f);
    queue.push(...f.view.nodes.flatMap((n) => n.childInstanceIds ?? []));
  }
  return out;
}
