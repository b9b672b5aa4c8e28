/**
 * A project directory as `wfx apply` reads it and `wfx export` writes it: `wfx.yaml` at its top,
 * and its flow files: those under `flows/` (and its subdirectories) when it has one, as `wfx
 * init` lays a project out, else its own. Flow tests (*.test.yaml) are left out.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { ProjectConfig, ProjectExport } from '../shared/api/index.js';
import { WfxError } from '../shared/errors.js';
import { isFlowFile } from '../shared/flow/files.js';
import { parseFlowSource, type ParsedSource } from '../shared/flow/parse.js';
import { secretNamesOf } from '../shared/flow/secret-refs.js';
import { validateFlowSource } from '../shared/flow/validate.js';

/** The file beside the flows that declares the rest. */
export const PROJECT_FILE = 'wfx.yaml';

/** A project read from disk. */
export interface ProjectFiles {
  readonly flows: ReadonlyArray<{ readonly file: string; readonly source: string }>;
  readonly config: ProjectConfig;
  /** wfx.yaml's text parsed with positions (null: the project has none): where a refusal's path stands. */
  readonly configSource: ParsedSource | null;
}

/** The flow files under `dir`, every level, sorted; dot directories and node_modules left out. */
async function flowFilesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await flowFilesUnder(path)));
    else if (entry.isFile() && isFlowFile(entry.name)) out.push(path);
  }
  return out.sort();
}

/** Reads project `dir`. Throws USAGE_ERROR for a missing directory, PROJECT_INVALID for a wfx.yaml that is no YAML mapping. */
export async function readProject(dir: string): Promise<ProjectFiles> {
  if (!existsSync(dir)) throw new WfxError('USAGE_ERROR', `no directory ${dir}`);
  const flowsDir = join(dir, 'flows');
  const files = existsSync(flowsDir)
    ? await flowFilesUnder(flowsDir)
    : (await readdir(dir, { withFileTypes: true }))
        .filter((e) => e.isFile() && isFlowFile(e.name) && !/^wfx\.ya?ml$/i.test(e.name))
        .map((e) => join(dir, e.name))
        .sort();
  const flows = [];
  for (const file of files) flows.push({ file: relative(dir, file), source: await readFile(file, 'utf8') });
  const configFile = join(dir, PROJECT_FILE);
  if (!existsSync(configFile)) return { flows, config: {}, configSource: null };
  const text = await readFile(configFile, 'utf8');
  const parsed = parseFlowSource(text);
  const first = parsed.syntaxErrors[0];
  if (first !== undefined) {
    const at = first.position ? `:${first.position.line}:${first.position.column}` : '';
    throw new WfxError('PROJECT_INVALID', `${PROJECT_FILE}${at}: ${first.message}`);
  }
  const value = parsed.value ?? {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new WfxError('PROJECT_INVALID', `${PROJECT_FILE}: its top level must be a mapping (webhooks:, env:, ...)`);
  return { flows, config: value as ProjectConfig, configSource: parsed };
}

/** The secrets `project` names: wfx.yaml's `secrets:` and entries' `secret:`, and its valid flows' `{secret.NAME}`. */
export function secretsNamed(project: ProjectFiles): string[] {
  const { config } = project;
  const names = new Set<string>(Array.isArray(config.secrets) ? config.secrets : []);
  for (const list of [config.webhooks, config.emailConnections, config.providers])
    for (const entry of Array.isArray(list) ? list : []) if (typeof entry?.secret === 'string') names.add(entry.secret);
  for (const f of project.flows) {
    const checked = validateFlowSource(f.source);
    if (checked.ok) for (const name of secretNamesOf(checked.flow)) names.add(name);
  }
  return [...names].sort();
}

/**
 * Where a daemon's VALIDATION_ERROR about the body's `config` points in wfx.yaml
 * (`body/config/webhooks/0/provider must be ...`): `wfx.yaml:line:column: ...`, or the message
 * as it is when it is about something else.
 */
export function locateConfigError(message: string, source: ParsedSource | null): string {
  const m = /^body\/config\/(\S*)\s(.*)$/s.exec(message);
  if (!m || source === null) return message;
  const path = m[1]!
    .split('/')
    .filter((s) => s !== '')
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const pos = source.positionOf(path);
  return `${PROJECT_FILE}${pos ? `:${pos.line}:${pos.column}` : ''}: ${path.join('.')} ${m[2]!}`;
}

/** The files `wfx export` writes for `project` into `dir`, relative to it, with their text. */
export function exportedFiles(project: ProjectExport): Array<{ file: string; text: string }> {
  const header =
    `# What \`wfx apply\` makes a daemon hold besides its flows (docs/deploys.md).\n` +
    `# Exported from organization ${project.organization}, environment ${project.environment}.\n` +
    `# A secret is named here, never given: set its value with \`wfx secrets set NAME\`.\n`;
  return [
    { file: PROJECT_FILE, text: header + stringify(project.config) },
    ...project.flows.map((f) => ({ file: join('flows', `${f.processId}.yaml`), text: stringify(f.definition) })),
  ];
}

/** Writes `files` into `dir`; an existing one is FILE_EXISTS unless `force`. Gives the paths written. */
export async function writeProject(
  dir: string,
  files: ReturnType<typeof exportedFiles>,
  force: boolean,
): Promise<string[]> {
  if (!force)
    for (const f of files)
      if (existsSync(join(dir, f.file)))
        throw new WfxError(
          'FILE_EXISTS',
          `${join(dir, f.file)} exists already (--force writes over the files export makes)`,
        );
  const written: string[] = [];
  for (const f of files) {
    const path = resolve(dir, f.file);
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, f.text);
    written.push(join(dir, f.file));
  }
  return written;
}
