import { writeFile } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Option, type Command } from 'commander';
import type { FileView } from '../../shared/api/index.js';
import { WfxError } from '../../shared/errors.js';
import { clientFor } from '../api.js';
import { globals, printJson, readUserFile, type CliContext } from '../context.js';
import { table } from '../format.js';
import { wholeFromOne } from '../options.js';

/** Content types by extension, for the files people upload most; the rest is octet-stream. */
const TYPES: Readonly<Record<string, string>> = {
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
};

/** The content type of `file` by its extension. Pure. */
export function mimeTypeOfPath(file: string): string {
  return TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/** "1.5 MiB": a size for people. Pure. */
export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** `wfx files put|get|list|delete`: the organization's file store. */
export function registerFiles(program: Command, ctx: CliContext): void {
  const files = program
    .command('files')
    .description("the file store: uploads for file inputs and voiceTask, a voiceTask's audio");

  files
    .command('put')
    .description('upload a file; prints its fileId (give it to a file input or a voiceTask)')
    .argument('<file>', 'the file to upload')
    .option('--name <name>', 'its name in the store (default: the file name)')
    .option('--type <mime>', 'its content type (default: by extension, else application/octet-stream)')
    .addOption(new Option('--org <organization>', 'system keys: the organization (default: default)'))
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx files put greeting.wav\n  $ wfx files put scan.pdf --name "Invoice 42" --json',
    )
    .action(async (file: string, opts: { name?: string; type?: string; org?: string }, cmd: Command) => {
      const content = await readUserFile(ctx, file);
      const stored = await (
        await clientFor(ctx, cmd)
      ).files.put(content, {
        name: opts.name ?? basename(file),
        mimeType: opts.type ?? mimeTypeOfPath(file),
        ...(opts.org !== undefined && { organization: opts.org }),
      });
      if (globals(cmd).json) return printJson(ctx, stored);
      ctx.stdout.write(`${stored.fileId}  ${stored.name}  ${stored.mimeType}  ${humanBytes(stored.bytes)}\n`);
    });

  files
    .command('get')
    .description('download a file: to --output, else to standard output')
    .argument('<fileId>')
    .option('-o, --output <file>', 'write it to this file')
    .addHelpText(
      'after',
      '\nExamples:\n  $ wfx files get file_0123... -o answer.wav\n  $ wfx files get file_0123... | aplay',
    )
    .action(async (fileId: string, opts: { output?: string }, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).files.content(fileId);
      if (!res.body) throw new WfxError('INTERNAL_ERROR', 'the download has no body');
      const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
      if (opts.output === undefined) {
        await pipeline(body, ctx.stdout, { end: false });
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk as Buffer);
      await writeFile(resolve(ctx.cwd, opts.output), Buffer.concat(chunks));
      if (!globals(cmd).json) ctx.stderr.write(`wrote ${opts.output}\n`);
    });

  files
    .command('list')
    .description('the organization’s files, newest first')
    .option('--limit <n>', 'at most this many', wholeFromOne, 100)
    .addOption(new Option('--org <organization>', 'system keys: one organization (default: all)'))
    .action(async (opts: { limit: number; org?: string }, cmd: Command) => {
      const client = await clientFor(ctx, cmd);
      const items: FileView[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.files.list({
          limit: Math.min(1000, opts.limit - items.length),
          cursor,
          ...(opts.org !== undefined && { organization: opts.org }),
        });
        items.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined && items.length < opts.limit);
      if (globals(cmd).json) return printJson(ctx, items);
      ctx.stdout.write(
        table(
          ['FILE ID', 'NAME', 'TYPE', 'SIZE', 'CREATED', 'EXPIRES'],
          items.map((f) => [f.fileId, f.name, f.mimeType, humanBytes(f.bytes), f.createdAt, f.expiresAt]),
        ),
      );
    });

  files
    .command('delete')
    .description('delete a file (needs ADMIN)')
    .argument('<fileId>')
    .action(async (fileId: string, _opts: unknown, cmd: Command) => {
      const res = await (await clientFor(ctx, cmd)).files.delete(fileId);
      if (globals(cmd).json) printJson(ctx, res);
      else ctx.stdout.write(`${fileId} deleted\n`);
    });
}
