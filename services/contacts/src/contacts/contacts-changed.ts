/**
 * Told after a commit changed contacts' data, subscription or events, so that what
 * depends on them (tracked segments) follows at once; it must not throw or block.
 */
export type ContactsChanged = (projectId: string, contactIds: readonly string[]) => void;
