/**
 * What a unit of work (an HTTP call of a serviceTask, a script of a scriptTask) comes back
 * with. Work runs outside the engine's synchronous transitions; its result resumes the node.
 */
export type WorkResult =
  | { readonly ok: true; readonly value: unknown; readonly logs?: readonly string[] }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly logs?: readonly string[] };
