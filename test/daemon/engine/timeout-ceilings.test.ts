import t from 'tap';
import { modelCall } from '../../../src/daemon/engine/nodes/ai.js';
import type { NodeScope, Outcome } from '../../../src/daemon/engine/nodes/handler.js';
import { voiceTask } from '../../../src/daemon/engine/nodes/voice.js';
import { scriptTask, serviceTask } from '../../../src/daemon/engine/nodes/work.js';
import { MAX_CALL_TIMEOUT_MS, MAX_SCRIPT_TIMEOUT_MS } from '../../../src/shared/flow/timeouts.js';
import type { AiTaskNode, ScriptTaskNode, ServiceTaskNode, VoiceTaskNode } from '../../../src/shared/flow/types.js';

/** As much of a node's scope as these handlers read. */
const scope = {
  instance: { organization: 'default', variables: {} },
  nodeId: 'x',
  resolve: (v: unknown) => v,
  credentials: () => [],
} as unknown as NodeScope;

/** The timeoutMs of the work a handler asks for. */
function timeoutOf(outcome: Outcome): number {
  if (outcome.kind !== 'work') throw new Error(`expected work, got ${outcome.kind}`);
  const w = outcome.work;
  if (w.kind === 'mcp') throw new Error('an MCP call has no timeout of its node');
  return w.kind === 'script' ? w.run.timeoutMs : w.call.timeoutMs;
}

// Flows published before the ceilings (the validator refuses these now) must not arm a timer
// beyond them: 30d would overflow setTimeout, which then fires at once.
t.test('a timeout published before its ceiling runs at the ceiling', async (t) => {
  const thirtyDays = '30d';
  const script = { type: 'scriptTask', script: 'return 1', timeout: thirtyDays, next: 'done' } as ScriptTaskNode;
  t.equal(timeoutOf(scriptTask.run(script, scope)), MAX_SCRIPT_TIMEOUT_MS);
  t.equal(timeoutOf(scriptTask.run({ ...script, timeout: '2s' }, scope)), 2000, 'under it: as stated');

  const service = { type: 'serviceTask', url: 'http://x.test/', timeout: thirtyDays, next: 'done' } as ServiceTaskNode;
  t.equal(timeoutOf(serviceTask.run(service, scope)), MAX_CALL_TIMEOUT_MS);

  const ai = { type: 'aiTask', prompt: 'hi', timeout: thirtyDays, next: 'done' } as AiTaskNode;
  t.equal(modelCall(ai, scope, []).timeoutMs, MAX_CALL_TIMEOUT_MS);

  const voice = {
    type: 'voiceTask',
    operation: 'speak',
    text: 'hi',
    timeout: thirtyDays,
    next: 'done',
  } as VoiceTaskNode;
  t.equal(timeoutOf(voiceTask.run(voice, scope)), MAX_CALL_TIMEOUT_MS);
});
