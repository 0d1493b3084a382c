import type { ContactErasure } from "@herald/kafka";
import { uuidBefore } from "../domain/ids.js";
import type { Tx } from "./campaigns.js";

/**
 * What campaigns keep of one recipient is the fan-out's cursor, the last contact a campaign enqueued: where it names
 * an erased contact it moves to the uuid just before (uuidBefore), which resumes after the same contacts. Counters
 * and stats are totals and keep them; engagements name emails, which delivery erases. Idempotent.
 */
export async function eraseContactFromCampaigns(tx: Tx, erasure: ContactErasure): Promise<number> {
  const before = uuidBefore(erasure.contactId);
  return tx.$executeRaw`
    UPDATE campaigns SET fanout_cursor = ${before ?? null}::uuid
    WHERE project_id = ${erasure.projectId}::uuid AND fanout_cursor = ${erasure.contactId}::uuid`;
}
