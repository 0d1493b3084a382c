import { topics } from "@herald/kafka";
import type { Tx } from "../db/client.js";

/**
 * herald.contact-changes.v1: contact.created, contact.updated and contact.deleted, each a
 * ContactChange keyed by the contact. No code here writes them: a trigger on contacts does, in the
 * statement of every change (migration 20261128203000_contact_changes; docs/decisions.md,
 * "Contact changes are written by a trigger").
 */
export const contactChangesTopic = topics.contactChanges;

/** Tells that trigger to write nothing for the rest of the transaction: a project wipe is no contact's deletion. */
export async function withoutContactChanges(tx: Tx): Promise<void> {
  await tx.$executeRaw`SELECT set_config('herald.contact_changes', 'off', true)`;
}
