/** Flows the engine's tests build from YAML, shared by the in-memory step tests and the engine's. */

/** start -> ask (an input node with `props`, indented under it) -> done; `extra` nodes after it. */
export function inputFlow(props: string, extra = '') {
  return `
processId: AUTO
name: Ask
nodes:
  start: { type: startEvent, next: ask }
  ask:
    type: inputNode
    formTitle: "Approve order {order.id}?"
${props
  .trim()
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
    next: done
${extra}
  done: { type: endEvent }
`;
}

/** start -> each (a loopNode with `props` over `body`, its nodes) -> done. */
export const loopFlow = (
  props: string,
  body = `
      s: { type: startEvent, next: calc }
      calc: { type: setVariable, variables: { square: "{item}", seen: "{index}" }, next: e }
      e: { type: endEvent }`,
) => `
processId: AUTO
name: Loop
nodes:
  start: { type: startEvent, next: each }
  each:
    type: loopNode
${props}
    nodes:${body}
    next: done
  done: { type: endEvent }
`;
