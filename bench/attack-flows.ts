/**
 * The flows of issue #53's attacks, as a tenant would publish them: the fault-load benchmark's
 * attacker (fault-attacker.ts) and the end-to-end tests of the limits run the same ones.
 */

/** processIds of the attack flows. */
export const RUNAWAY = '53bec000-0000-4000-8000-000000000002';
export const BOMB = '53bec000-0000-4000-8000-000000000003';
export const ENDLESS = '53bec000-0000-4000-8000-000000000004';
/** The flow of issue #81's fork (and its variants: one flow at a time uses the id). */
export const FORK = '66666666-3333-4444-8555-666666666666';

/** Issue #81's fork: a parallel gateway into two callProcess nodes that call their own flow (`processId`). */
export function forkFlow(processId = FORK): string {
  return `processId: ${processId}
name: fork
nodes:
  start: { type: startEvent, next: f }
  f: { type: parallelGateway, next: [a, b] }
  a: { type: callProcess, processId: ${processId}, next: j }
  b: { type: callProcess, processId: ${processId}, next: j }
  j: { type: parallelGateway, next: done }
  done: { type: endEvent }
`;
}

/** The fork, each execution waiting `pause` (a duration) first: a tree that grows a level per pause. */
export function pausedForkFlow(pause: string, processId = FORK): string {
  return forkFlow(processId).replace(
    'start: { type: startEvent, next: f }',
    `start: { type: startEvent, next: pause }\n  pause: { type: intermediateCatchEvent, eventType: timer, duration: ${pause}, next: f }`,
  );
}

/**
 * The fork behind a stop condition: each execution passes `depth` down, one more, and those at
 * `until` end (a recursion whose stop comes too late: 2^(until+1) executions).
 */
export function forkUntilFlow(processId = FORK): string {
  return `processId: ${processId}
name: fork until
nodes:
  start: { type: startEvent, next: deeper }
  deeper:
    type: exclusiveGateway
    branches: [{ condition: "\${depth < until}", next: inc }]
    default: done
  inc: { type: scriptTask, script: "return { below: vars.depth + 1 }", next: f }
  f: { type: parallelGateway, next: [a, b] }
  a: { type: callProcess, processId: ${processId}, data: { depth: "{below}", until: "{until}" }, next: j }
  b: { type: callProcess, processId: ${processId}, data: { depth: "{below}", until: "{until}" }, next: j }
  j: { type: parallelGateway, next: done }
  done: { type: endEvent }
`;
}

/**
 * A parallel loop over a script's `items` items, `concurrency` at once (each iteration waits
 * for input); a flow that calls itself twice over; a script that never ends (the longest a
 * script's timeout may be).
 */
export function runawayFlow(items: number | '{n}' = 99_000, concurrency = 1000): string {
  const length = items === '{n}' ? 'vars.n' : String(items);
  return `processId: ${RUNAWAY}
name: Runaway loop
nodes:
  start: { type: startEvent, next: make }
  make: { type: scriptTask, script: "return { items: Array.from({ length: ${length} }, (_, i) => i) }", next: each }
  each:
    type: loopNode
    collection: "{items}"
    parallel: true
    concurrency: ${concurrency}
    maxIterations: 100000
    nodes:
      s: { type: startEvent, next: ask }
      ask: { type: inputNode, inputType: textbox, next: e }
      e: { type: endEvent }
    next: done
  done: { type: endEvent }
`;
}

export const FLOWS = {
  runaway: runawayFlow(),
  bomb: `processId: ${BOMB}
name: Calls itself twice
nodes:
  start: { type: startEvent, next: fork }
  fork: { type: parallelGateway, next: [left, right] }
  left: { type: callProcess, processId: ${BOMB}, next: end1 }
  right: { type: callProcess, processId: ${BOMB}, next: end2 }
  end1: { type: endEvent }
  end2: { type: endEvent }
`,
  endless: `processId: ${ENDLESS}
name: Endless script
nodes:
  start: { type: startEvent, next: run }
  run: { type: scriptTask, script: "while (true) {}", timeout: 5m, next: done }
  done: { type: endEvent }
`,
};

/** A setVariable of `keys` variables: the 40,000 is refused by size, 10,000 is the most a flow may set. */
export function bigFlow(keys: number): string {
  const vars = Array.from({ length: keys }, (_, i) => `      k${i}: ${i}`).join('\n');
  return `processId: 53bec000-0000-4000-8000-${String(keys % 1e12).padStart(12, '0')}
name: Big publish
nodes:
  start: { type: startEvent, next: set }
  set:
    type: setVariable
    variables:
${vars}
    next: done
  done: { type: endEvent }
`;
}
