/**
 * A flow's test file (`*.test.yaml`, SPEC.md section 11): the flow file it tests and its cases,
 * read and checked whole before any case runs. A problem is given with the line and column of
 * what it names, as a flow file's are (shared/flow/parse.ts keeps the positions).
 */
import { parseDuration } from '../../shared/duration.js';
import { parseFlowSource, type SourcePosition } from '../../shared/flow/parse.js';
import type { CaseStep, Expectation, Mock, StartTrigger, TestCase, TestFile, TestFileProblem } from './test-case.js';
import { mockAnswer } from './test-file-mocks.js';
import { known, list, object, Problem, text_, type Path } from './test-file-parts.js';

export type * from './test-case.js';

const STATES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
/** Reads test file `file` (its text `text`): the file, or its problems. Pure. */
export function readTestFile(
  file: string,
  text: string,
): { ok: true; test: TestFile } | { ok: false; problems: TestFileProblem[] } {
  const parsed = parseFlowSource(text);
  if (parsed.syntaxErrors.length > 0)
    return {
      ok: false,
      problems: parsed.syntaxErrors.map((e) => ({ file, ...e.position, message: e.message })),
    };
  const where = (path: Path): SourcePosition | undefined => parsed.positionOf(path);
  const at = (path: Path): string => {
    const p = where(path);
    return p ? `${file}:${p.line}:${p.column}` : file;
  };
  try {
    const root = object(parsed.value, []);
    known(root, [], ['flow', 'flows', 'domains', 'env', 'secrets', 'cases']);
    const domains: Record<string, string> = {};
    if (root.domains !== undefined)
      for (const [name, f] of Object.entries(object(root.domains, ['domains'])))
        domains[name] = text_(f, ['domains', name]);
    const flow = text_(root.flow, ['flow']);
    const flows = root.flows === undefined ? [] : list(root.flows, ['flows']).map((f, i) => text_(f, ['flows', i]));
    const env = root.env === undefined ? {} : envOf(root.env, ['env']);
    const secrets = root.secrets === undefined ? {} : envOf(root.secrets, ['secrets']);
    const cases = list(root.cases, ['cases']).map((c, i) => readCase(c, ['cases', i], at, { env, secrets }));
    if (cases.length === 0) throw new Problem(['cases'], 'a test file needs at least one case');
    const names = new Set<string>();
    cases.forEach((c, i) => {
      if (names.has(c.name)) throw new Problem(['cases', i, 'name'], `two cases are named "${c.name}"`);
      names.add(c.name);
    });
    return { ok: true, test: { file, flow, flows, domains, cases } };
  } catch (err) {
    if (!(err instanceof Problem)) throw err;
    const position = err.atKey ? parsed.keyPositionOf(err.path) : where(err.path);
    return { ok: false, problems: [{ file, ...position, message: err.message }] };
  }
}

/** `{env.NAME}` or `{secret.NAME}` values: names to strings. */
function envOf(value: unknown, path: Path): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(object(value, path))) env[k] = text_(v, [...path, k]);
  return env;
}

function readCase(
  value: unknown,
  path: Path,
  at: (path: Path) => string,
  file: { readonly env: Readonly<Record<string, string>>; readonly secrets: Readonly<Record<string, string>> },
): TestCase {
  const c = object(value, path);
  known(c, path, ['name', 'start', 'env', 'secrets', 'mocks', 'steps', 'expect']);
  const name = text_(c.name, [...path, 'name']);
  const start = c.start === undefined ? {} : object(c.start, [...path, 'start']);
  known(start, [...path, 'start'], ['data', 'environment', 'correlationKey', 'webhook', 'email']);
  if (start.webhook !== undefined && start.email !== undefined)
    throw new Problem([...path, 'start', 'email'], 'a start comes through a webhook or an email, not both');
  const through =
    start.webhook !== undefined
      ? webhookStart(start.webhook, [...path, 'start', 'webhook'])
      : start.email !== undefined
        ? emailStart(start.email, [...path, 'start', 'email'])
        : null;
  const environment = start.environment ?? 'PRODUCTION';
  if (environment !== 'PRODUCTION' && environment !== 'DEVELOPMENT')
    throw new Problem([...path, 'start', 'environment'], 'environment is PRODUCTION or DEVELOPMENT');
  const env = { ...file.env, ...(c.env === undefined ? {} : envOf(c.env, [...path, 'env'])) };
  const secrets = { ...file.secrets, ...(c.secrets === undefined ? {} : envOf(c.secrets, [...path, 'secrets'])) };
  const mocks: Record<string, Mock> = {};
  if (c.mocks !== undefined)
    for (const [node, m] of Object.entries(object(c.mocks, [...path, 'mocks'])))
      mocks[node] = Array.isArray(m)
        ? m.map((a, i) => mockAnswer(a, [...path, 'mocks', node, i]))
        : mockAnswer(m, [...path, 'mocks', node]);
  const steps = c.steps === undefined ? [] : list(c.steps, [...path, 'steps']);
  return {
    name,
    start: {
      data: {
        ...through?.variables,
        ...(start.data === undefined ? {} : object(start.data, [...path, 'start', 'data'])),
      },
      ...(through !== null && { trigger: through.trigger }),
      environment,
      correlationKey:
        start.correlationKey === undefined ? null : text_(start.correlationKey, [...path, 'start', 'correlationKey']),
    },
    env,
    secrets,
    mocks,
    steps: steps.map((s, i) => readStep(s, [...path, 'steps', i], at)),
    expect: c.expect === undefined ? {} : expectation(c.expect, [...path, 'expect']),
    at: at(path),
  };
}

/** A start through a webhook: the variables its trigger gives a flow (triggers/webhook-processing.ts). */
function webhookStart(value: unknown, path: Path): { variables: Record<string, unknown>; trigger: StartTrigger } {
  const w = object(value, path);
  known(w, path, ['payload', 'eventType', 'headers', 'provider', 'eventId']);
  const headers: Record<string, string> = {};
  if (w.headers !== undefined)
    for (const [k, v] of Object.entries(object(w.headers, [...path, 'headers'])))
      headers[k.toLowerCase()] = text_(v, [...path, 'headers', k]);
  const eventType = w.eventType === undefined ? null : text_(w.eventType, [...path, 'eventType']);
  const eventId = w.eventId === undefined ? 'test-event' : text_(w.eventId, [...path, 'eventId']);
  const payload = w.payload ?? {};
  return {
    variables: {
      webhookPayload: payload,
      webhookEventType: eventType,
      webhookHeaders: headers,
      webhookProvider: w.provider === undefined ? 'CUSTOM' : text_(w.provider, [...path, 'provider']).toUpperCase(),
      webhookEventId: eventId,
      webhookTraceId: eventId,
      webhookRawBody: typeof payload === 'string' ? payload : JSON.stringify(payload),
      webhookEventTimestamp: null,
    },
    trigger: { type: 'webhook', eventType },
  };
}

/** A start through an email: the variables its trigger gives a flow (triggers/email.ts). */
function emailStart(value: unknown, path: Path): { variables: Record<string, unknown>; trigger: StartTrigger } {
  const m = object(value, path);
  known(m, path, ['subject', 'from', 'body', 'to', 'messageId']);
  const subject = m.subject === undefined ? '' : String(m.subject);
  const sender = text_(m.from, [...path, 'from']);
  const body = m.body === undefined ? '' : String(m.body);
  const to = m.to === undefined ? [] : list(m.to, [...path, 'to']).map((a, i) => text_(a, [...path, 'to', i]));
  return {
    variables: {
      emailSubject: subject,
      emailBody: body,
      emailSender: sender,
      emailRecipients: to,
      emailMessageId: m.messageId === undefined ? '<test@wfx.invalid>' : text_(m.messageId, [...path, 'messageId']),
      emailDate: null,
      triggerType: 'email',
      emailAttachments: [],
    },
    trigger: { type: 'email', subject, sender, body },
  };
}

function readStep(value: unknown, path: Path, at: (path: Path) => string): CaseStep {
  const s = object(value, path);
  const keys = Object.keys(s);
  if (keys.length !== 1)
    throw new Problem(
      path,
      `a step is one of expect, answer, advance or event (found ${keys.join(', ') || 'nothing'})`,
    );
  const kind = keys[0]!;
  const body = s[kind];
  const here = [...path, kind];
  switch (kind) {
    case 'expect':
      return { kind, expect: expectation(body, here), at: at(path) };
    case 'answer': {
      const a = object(body, here);
      known(a, here, ['node', 'action', 'data']);
      const action = a.action ?? 'COMPLETE';
      if (action !== 'COMPLETE' && action !== 'CANCEL')
        throw new Problem([...here, 'action'], 'action is COMPLETE or CANCEL');
      const data = a.data === undefined ? {} : object(a.data, [...here, 'data']);
      return { kind, node: text_(a.node, [...here, 'node']), action, data, at: at(path) };
    }
    case 'advance': {
      const text = text_(body, here);
      try {
        return { kind, ms: parseDuration(text), text, at: at(path) };
      } catch (err) {
        throw new Problem(here, (err as Error).message);
      }
    }
    case 'event': {
      const e = object(body, here);
      known(e, here, ['type', 'correlationKey', 'data']);
      return {
        kind,
        type: text_(e.type, [...here, 'type']),
        correlationKey: e.correlationKey === undefined ? null : String(e.correlationKey),
        data: e.data === undefined ? {} : object(e.data, [...here, 'data']),
        at: at(path),
      };
    }
    default:
      throw new Problem(path, `"${kind}" is no step: a step is one of expect, answer, advance or event`);
  }
}

function expectation(value: unknown, path: Path): Expectation {
  const e = object(value, path);
  known(e, path, ['state', 'path', 'variables', 'errorCode', 'waitingAt']);
  const out: { -readonly [K in keyof Expectation]: Expectation[K] } = {};
  if (e.state !== undefined) {
    if (!STATES.includes(e.state as (typeof STATES)[number]))
      throw new Problem([...path, 'state'], `state is one of ${STATES.join(', ')}`);
    out.state = e.state as Expectation['state'];
  }
  if (e.path !== undefined) out.path = list(e.path, [...path, 'path']).map((n, i) => text_(n, [...path, 'path', i]));
  if (e.variables !== undefined) out.variables = object(e.variables, [...path, 'variables']);
  if (e.errorCode !== undefined) out.errorCode = text_(e.errorCode, [...path, 'errorCode']);
  if (e.waitingAt !== undefined) out.waitingAt = text_(e.waitingAt, [...path, 'waitingAt']);
  return out;
}
