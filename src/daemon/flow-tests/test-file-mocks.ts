/**
 * A case's mock answers as the test file gives them (test-file.ts reads the rest): each node's
 * answer checked for its keys, whatever node it is for (mocks.ts judges that as the node calls).
 */
import type { MockAnswer } from './test-case.js';
import { known, object, Problem, text_, list, type Path } from './test-file-parts.js';

export function mockAnswer(value: unknown, path: Path): MockAnswer {
  const m = object(value, path);
  if ('fail' in m) {
    known(m, path, ['fail']);
    const f = object(m.fail, [...path, 'fail']);
    known(f, [...path, 'fail'], ['code', 'message']);
    const code = text_(f.code, [...path, 'fail', 'code']);
    return {
      fail: {
        code,
        message: f.message === undefined ? `mocked failure ${code}` : text_(f.message, [...path, 'fail', 'message']),
      },
    };
  }
  if ('output' in m) {
    known(m, path, ['output']);
    return { output: object(m.output, [...path, 'output']) };
  }
  if ('result' in m) {
    known(m, path, ['result']);
    return { result: object(m.result, [...path, 'result']) };
  }
  if ('reply' in m) {
    known(m, path, ['reply']);
    return { reply: m.reply };
  }
  if ('toolCalls' in m) {
    known(m, path, ['toolCalls']);
    const calls = list(m.toolCalls, [...path, 'toolCalls']).map((c, i) => {
      const here = [...path, 'toolCalls', i];
      const call = object(c, here);
      known(call, here, ['name', 'arguments']);
      const args = call.arguments === undefined ? {} : object(call.arguments, [...here, 'arguments']);
      return { name: text_(call.name, [...here, 'name']), arguments: args };
    });
    return { toolCalls: calls };
  }
  if ('text' in m || 'error' in m) {
    const key = 'text' in m ? 'text' : 'error';
    known(m, path, [key]);
    if (typeof m[key] !== 'string')
      throw new Problem(
        [...path, key],
        key === 'text' ? "text is an MCP tool's text result" : "error is the MCP tool's own error",
      );
    return key === 'text' ? { text: m.text as string } : { error: m.error as string };
  }
  if ('heard' in m) {
    known(m, path, ['heard', 'language']);
    if (typeof m.heard !== 'string') throw new Problem([...path, 'heard'], 'heard is the text a transcribe heard');
    return { heard: m.heard, ...(m.language !== undefined && { language: text_(m.language, [...path, 'language']) }) };
  }
  if ('spoken' in m) {
    known(m, path, ['spoken']);
    const spoken = m.spoken === null ? {} : object(m.spoken, [...path, 'spoken']);
    known(spoken, [...path, 'spoken'], ['durationMs', 'bytes']);
    const count = (key: 'durationMs' | 'bytes') => {
      const v = spoken[key];
      if (v === undefined) return {};
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
        throw new Problem([...path, 'spoken', key], `${key} is a whole number, 0 or more`);
      return { [key]: v };
    };
    return { spoken: { ...count('durationMs'), ...count('bytes') } };
  }
  if ('timeout' in m) {
    known(m, path, ['timeout']);
    if (m.timeout !== true) throw new Problem([...path, 'timeout'], 'timeout is true: the call gets no answer in time');
    return { timeout: true };
  }
  if ('network' in m) {
    known(m, path, ['network']);
    return { network: text_(m.network, [...path, 'network']) };
  }
  known(m, path, ['status', 'body', 'headers']);
  const status = m.status ?? 200;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599)
    throw new Problem([...path, 'status'], 'status is an HTTP status, 100 to 599');
  const headers: Record<string, string> = {};
  if (m.headers !== undefined)
    for (const [k, v] of Object.entries(object(m.headers, [...path, 'headers'])))
      headers[k] = text_(v, [...path, 'headers', k]);
  return { status, ...(m.body !== undefined && { body: m.body }), ...(m.headers !== undefined && { headers }) };
}
