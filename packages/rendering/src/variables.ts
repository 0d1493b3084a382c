/** What a caller knows about the recipient and the send, beyond the template. */
export interface RenderVariables {
  /** The contact's data merged with this send's one-shot values (already unwrapped from { value, persistent: false }). */
  data?: Record<string, unknown>;
  /** The contact's own fields, outside data. */
  contact?: { id?: string; email?: string };
  /** Links the service generates for this recipient. */
  unsubscribeUrl?: string;
  subscribeUrl?: string;
  manageUrl?: string;
  /** Used as {{locale}} only when data has no locale of its own (a project's default, for instance). */
  locale?: string;
}

/**
 * Names the service provides: data can never set them (SPEC.md "Custom fields" rule 2 drops
 * them on write; a stored or one-shot value that still carries one is ignored here too).
 */
export const reservedNames = [
  "id",
  "email",
  "herald_id",
  "herald_email",
  "unsubscribeUrl",
  "subscribeUrl",
  "manageUrl",
  // The data object itself, so {{data["first name"]}} always means the contact's data.
  "data",
] as const;

const reserved = new Set<string>(reservedNames);

/**
 * The Liquid scope: every data key at the top level ({{plan}}, {{profile.tier}}), the data
 * object as `data` (for keys with spaces), then the reserved names, which win.
 */
export function scopeOf(variables: RenderVariables): Record<string, unknown> {
  // fromEntries defines "__proto__" as a plain key instead of setting the prototype.
  const data: Record<string, unknown> = Object.fromEntries(Object.entries(variables.data ?? {}).filter(([key]) => !reserved.has(key)));
  const contact = variables.contact ?? {};
  return {
    ...data,
    locale: data.locale ?? variables.locale,
    data,
    id: contact.id,
    email: contact.email,
    herald_id: contact.id,
    herald_email: contact.email,
    unsubscribeUrl: variables.unsubscribeUrl,
    subscribeUrl: variables.subscribeUrl,
    manageUrl: variables.manageUrl,
  };
}
