import t from 'tap';
import { validateFlowSource, type FlowProblem } from '../../../src/shared/flow/validate.js';

/** The flow with `nodes` (YAML, indented under `nodes:`). */
const flow = (nodes: string) => `processId: 0b7c6a3e-2f0e-4a57-9a43-3d4f1c9e8b11
name: Secrets
nodes:
  start: { type: startEvent, next: call }
${nodes}
  done: { type: endEvent }
`;

function secretProblems(text: string): Array<Pick<FlowProblem, 'nodeId' | 'property' | 'line'>> {
  const v = validateFlowSource(text);
  if (v.ok) return [];
  return v.problems
    .filter((p) => p.code === 'SECRET_NOT_ALLOWED')
    .map((p) => ({ nodeId: p.nodeId, property: p.property, line: p.line }));
}

t.test("{secret.NAME} is taken in a serviceTask's url, headers, query and body, in bodies too", async (t) => {
  const text = flow(`  call:
    type: serviceTask
    url: "https://api.example.com/{secret.PATH_KEY}/x"
    headers: { authorization: "Bearer {secret.TOKEN}" }
    query: { key: "{secret.API_KEY}" }
    body: { nested: ["{secret.TOKEN}", { deep: "{secret.TOKEN}" }] }
    next: each
  each:
    type: loopNode
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: inner }
      inner: { type: serviceTask, url: "https://api.example.com", headers: { k: "{secret.K}" }, next: e }
      e: { type: endEvent }
    next: done`);
  const v = validateFlowSource(text);
  t.ok(v.ok, v.ok ? '' : JSON.stringify(v.problems));
});

t.test('anywhere else, or not a name, the flow is refused where the reference stands', async (t) => {
  t.same(
    secretProblems(
      flow(`  call: { type: setVariable, variables: { copy: "{secret.TOKEN}" }, next: out }
  out: { type: serviceTask, url: "https://api.example.com", timeout: "{secret.T}", next: bad }
  bad: { type: serviceTask, url: "https://api.example.com/{secret.A.B}", next: each }
  each:
    type: loopNode
    collection: "{items}"
    nodes:
      s: { type: startEvent, next: inner }
      inner: { type: outputNode, outputs: { leaked: "token {secret.TOKEN}" }, next: e }
      e: { type: endEvent }
    next: script
  script: { type: scriptTask, script: "return { text: '{secret.TOKEN}' }", next: done }`),
    ),
    [
      { nodeId: 'call', property: 'variables.copy', line: 5 },
      { nodeId: 'out', property: 'timeout', line: 6 },
      { nodeId: 'bad', property: 'url', line: 7 },
      { nodeId: 'each', property: 'nodes.inner.outputs.leaked', line: 13 },
    ],
    "a script's text is code, not a template: not refused",
  );
});
