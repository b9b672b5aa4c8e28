/** True for a flow test file's name (*.test.yaml, *.test.yml: `wfx test` reads those). Pure. */
export const isFlowTestFile = (name: string): boolean => /\.test\.ya?ml$/i.test(name);

/**
 * True for the file names a flow directory holds as flows (*.yaml, *.yml, *.json), not the flow
 * tests beside them (isFlowTestFile). Pure.
 */
export const isFlowFile = (name: string): boolean => /\.(ya?ml|json)$/i.test(name) && !isFlowTestFile(name);
