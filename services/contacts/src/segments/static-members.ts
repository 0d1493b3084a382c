import type { ContactUpserts } from "../contacts/contact-upserts.js";
import type { Db } from "../db/client.js";
import { findContactsByEmail } from "../db/contacts.js";
import { addSegmentMembers, countStaticMembers, removeSegmentMembers, type SegmentRow, setMemberCount } from "../db/segments.js";
import { patchOfData } from "../domain/contact-data.js";
import { segmentMemberEmails, segmentNotStatic } from "../domain/segment-rules.js";

export interface MembersAdded {
  added: number;
  created: number;
  notFound: number;
  alreadyMembers: number;
}

/**
 * Adds contacts by email to a STATIC segment, creating the missing ones when asked,
 * and stores the new member count.
 */
export async function addStaticMembers(
  deps: { db: Db; upserts: ContactUpserts },
  projectId: string,
  segment: SegmentRow,
  request: { emails: string[]; createMissing: boolean; subscribed: boolean | undefined },
): Promise<MembersAdded> {
  const { db } = deps;
  if (segment.type !== "STATIC") throw segmentNotStatic("added");
  const emails = segmentMemberEmails(request.emails);
  const found = await findContactsByEmail(db, projectId, emails);
  const known = new Set(found.map((contact) => contact.email));
  const missing = emails.filter((email) => !known.has(email));
  const ids = found.map((contact) => contact.id);
  let created = 0;
  if (request.createMissing) {
    for (const email of missing) {
      const result = await deps.upserts.upsert({
        projectId,
        email,
        subscribed: request.subscribed,
        source: "api",
        patch: patchOfData(undefined),
      });
      ids.push(result.contact.id);
      if (result.created) created += 1;
    }
  }
  const added = await addSegmentMembers(db, projectId, segment.id, ids);
  await setMemberCount(db, segment.id, await countStaticMembers(db, segment.projectId, segment.id));
  return {
    added,
    created,
    notFound: request.createMissing ? 0 : missing.length,
    alreadyMembers: ids.length - added,
  };
}

/** Removes contacts by email from a STATIC segment and stores the new member count. */
export async function removeStaticMembers(
  db: Db,
  projectId: string,
  segment: SegmentRow,
  rawEmails: string[],
): Promise<{ removed: number; notMembers: number }> {
  if (segment.type !== "STATIC") throw segmentNotStatic("removed");
  const emails = segmentMemberEmails(rawEmails);
  const found = await findContactsByEmail(db, projectId, emails);
  const removed = await removeSegmentMembers(
    db,
    segment.projectId,
    segment.id,
    found.map((contact) => contact.id),
  );
  await setMemberCount(db, segment.id, await countStaticMembers(db, segment.projectId, segment.id));
  return { removed, notMembers: emails.length - removed };
}
