/**
 * Structured output: a JSON answer is always checked here, whatever the provider promised
 * (json_schema and grammars are requests, not guarantees: a gateway may drop them, a model may
 * stop mid-object). The first violation is named as a JSON pointer and Ajv's message, for the
 * repair request and for AI_OUTPUT_INVALID.
 */
import type { ValidateFunction } from 'ajv';
import { errorMessage } from '../../shared/errors.js';
import { compileJsonSchema } from '../../shared/flow/json-schema.js';
import type { AiMessage } from './types.js';

/** The result of checking an answer: its data, or the first violation in words. */
export type AnswerCheck =
  { readonly ok: true; readonly data: unknown } | { readonly ok: false; readonly violation: string };

/** Compiled schemas kept by their JSON text beyond those kept by identity (schemas come from published flows). */
const MAX_CACHED_BY_TEXT = 256;
const MAX_VIOLATION_CHARS = 300;

/**
 * Checks answers against JSON Schemas. Each schema is compiled once: cached by the schema
 * object's identity (a published flow's node keeps its object) and by its JSON text.
 */
export class AnswerChecker {
  private readonly byObject = new WeakMap<object, ValidateFunction>();
  private readonly byText = new Map<string, ValidateFunction>();

  /**
   * The answer's JSON and whether it matches `schema` (any JSON when absent). A Markdown code
   * fence around the JSON is tolerated (models add one even when asked not to). Throws only
   * when `schema` itself does not compile (publish checks it; see `compile`).
   */
  check(text: string, schema: Readonly<Record<string, unknown>> | undefined): AnswerCheck {
    const json = unfence(text);
    let data: unknown;
    try {
      data = JSON.parse(json);
    } catch (err) {
      return { ok: false, violation: json.trim() === '' ? 'the answer is empty, not JSON' : notJson(err) };
    }
    if (schema === undefined) return { ok: true, data };
    const validate = this.compile(schema);
    if (validate(data)) return { ok: true, data };
    const first = validate.errors?.[0];
    if (!first) return { ok: false, violation: 'does not match the schema' };
    const where = first.instancePath === '' ? '/' : first.instancePath;
    const allowed = (first.params as { allowedValues?: unknown }).allowedValues;
    const extra = (first.params as { additionalProperty?: unknown }).additionalProperty;
    const detail =
      allowed !== undefined
        ? ` (${JSON.stringify(allowed)})`
        : extra !== undefined
          ? ` (${JSON.stringify(extra)})`
          : '';
    return { ok: false, violation: clip(`${where} ${first.message ?? 'is invalid'}${detail}`) };
  }

  /**
   * The schema's validator, compiled on first use as publish compiles it (compileJsonSchema),
   * so a published schema compiles here too. Throws for one that does not compile.
   */
  compile(schema: Readonly<Record<string, unknown>>): ValidateFunction {
    let validate = this.byObject.get(schema);
    if (validate) return validate;
    const text = JSON.stringify(schema);
    validate = this.byText.get(text);
    if (!validate) {
      const compiled = compileJsonSchema(schema);
      if (!compiled.ok) throw new Error(compiled.message);
      validate = compiled.validate;
      if (this.byText.size >= MAX_CACHED_BY_TEXT) this.byText.clear();
      this.byText.set(text, validate);
    }
    this.byObject.set(schema, validate);
    return validate;
  }
}

/** The answer's text without a surrounding Markdown code fence (```json ... ```). Pure. */
function unfence(text: string): string {
  const m = /^\s*```[a-zA-Z]*\s*\n([\s\S]*?)\n?\s*```\s*$/.exec(text);
  return m ? m[1]! : text;
}

function clip(text: string): string {
  return text.length > MAX_VIOLATION_CHARS ? `${text.slice(0, MAX_VIOLATION_CHARS - 1)}…` : text;
}

/**
 * The user message of a repair request, after the bad answer: names the violation and asks for
 * the JSON again. Pure.
 */
export function repairMessage(violation: string, schema: Readonly<Record<string, unknown>> | undefined): AiMessage {
  const what = schema === undefined ? 'valid JSON' : 'JSON that matches the JSON Schema you were given';
  return {
    role: 'user',
    content: `Your answer is not valid: ${violation}. Answer again with only ${what}, and nothing else.`,
  };
}

/**
 * The system message that asks for JSON when the provider cannot be made to (json_object without
 * a schema, or no response_format at all): the schema itself, in the prompt. Pure.
 */
export function jsonInstruction(schema: Readonly<Record<string, unknown>> | undefined): AiMessage {
  return {
    role: 'system',
    content:
      schema === undefined
        ? 'Answer with a single JSON value only: no prose, no Markdown.'
        : `Answer with a single JSON value only (no prose, no Markdown) that matches this JSON Schema:\n${JSON.stringify(schema)}`,
  };
}

/**
 * Why text is not JSON, without quoting it: Node's own message quotes the answer (`Unexpected
 * token 'S', "Sure! my s"... is not valid JSON`), and the violation goes to the execution log,
 * which never holds an answer. Pure.
 */
export function notJson(err: unknown): string {
  const message = errorMessage(err);
  if (/end of (JSON|data)/i.test(message)) return 'not JSON: it ends before the JSON is complete';
  const at = /position (\d+)/.exec(message);
  return at ? `not JSON: invalid at character ${Number(at[1]) + 1}` : 'not JSON: it does not parse';
}

/** A tool call's `text` (its arguments) parsed as JSON, or the text itself when it is not JSON. Pure. */
export function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
