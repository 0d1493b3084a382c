import type { ActivityRow } from "../db/activity.js";
import type { Db } from "../db/client.js";
import { activityOfEmails, type ExportedEmailRow, pageContactEmails, pageReceivedFrom } from "../db/contact-export.js";
import { normaliseAddress } from "../domain/email-input.js";
import { isId, requireProjectId } from "../domain/ids.js";

/** A part of a contact's export from delivery: a page of its emails with their activity, or of the messages received from it. */
export type ContactEmailsPart =
  | { case: "emails"; value: Array<ExportedEmailRow & { activity: ActivityRow[] }> }
  | { case: "received"; value: ActivityRow[] };

const pageLimits = { fallback: 50, max: 500 };

/**
 * Everything delivery holds about one contact, for a data-subject access request (GDPR Article 15): the emails sent to
 * it (naming it or sent to its address), newest first, each with its activity, then the messages received from it, a
 * page at a time, so that a long history never sits in memory whole. A contact id that is no uuid has nothing here.
 */
export async function* exportContactEmails(
  db: Db,
  request: { projectId: string; contactId: string; email: string; pageSize: number },
): AsyncGenerator<ContactEmailsPart> {
  const projectId = requireProjectId(request.projectId);
  if (!isId(request.contactId)) return;
  const contact = { projectId, contactId: request.contactId, email: normaliseAddress(request.email) };
  const limit = request.pageSize <= 0 ? pageLimits.fallback : Math.min(Math.trunc(request.pageSize), pageLimits.max);
  let before: { at: Date; id: string } | undefined;
  for (;;) {
    const emails = await pageContactEmails(db, contact, before, limit);
    const activity = await activityOfEmails(
      db,
      projectId,
      emails.map((email) => email.id),
    );
    if (emails.length > 0) {
      yield { case: "emails", value: emails.map((email) => ({ ...email, activity: activity.filter((row) => row.emailId === email.id) })) };
    }
    const last = emails.at(-1);
    if (!last || emails.length < limit) break;
    before = { at: last.createdAt, id: last.id };
  }
  before = undefined;
  for (;;) {
    const received = await pageReceivedFrom(db, contact, before, limit);
    if (received.length > 0) yield { case: "received", value: received };
    const last = received.at(-1);
    if (!last || received.length < limit) break;
    before = { at: last.occurredAt, id: last.id };
  }
}
