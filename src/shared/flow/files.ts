/** True for the file names a flow directory holds (*.yaml, *.yml, *.json). Pure. */
export const isFlowFile = (name: string): boolean => /\.(ya?ml|json)$/i.test(name);
