/**
 * Whose executions an engine call may see or act on: one organization's, or any (null) for a
 * system credential. Not the HTTP caller (api/caller.ts), whose organization it carries.
 */
export type OrganizationScope = { readonly organization: string | null };
