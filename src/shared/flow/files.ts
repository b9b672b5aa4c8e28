/**
 * True for the file names a flow directory holds as flows (*.yaml, *.yml, *.json), not the flow
 * tests beside them (*.test.yaml, *.test.yml: `wfx test` reads those). Pure.
 */
export const isFlowFile = (name: string): boolean => /\.(ya?ml|json)$/i.test(name) && !/\.test\.ya?ml$/i.test(name);
