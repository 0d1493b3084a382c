import { DomainError } from "@herald/errors";
import type { KnownFields } from "../contacts/known-fields.js";
import type { Reader } from "../db/client.js";
import { contactKeyCounts, projectFieldCounts } from "../db/data-key-counts.js";
import type { DataPatch } from "../domain/contact-data.js";

export interface DataKeyLimits {
  /** TRACK_MAX_DATA_KEYS_PER_CONTACT: top-level keys a contact's data may hold after a /v1/track call. */
  perContact: number;
  /** TRACK_MAX_FIELDS_PER_PROJECT: distinct fields a project may have once a /v1/track call registered its keys. */
  perProject: number;
}

export const defaultDataKeyLimits: DataKeyLimits = { perContact: 200, perProject: 500 };

/**
 * The caps on what /v1/track, which a public (`pk_`) key in a browser may call, writes to
 * contacts' data: checked before anything is written, so a refused call writes neither the
 * contact nor its event. A call that adds no key (it only changes values, or removes keys)
 * always passes, even above a cap lowered since. Two calls at once may each pass and together
 * overshoot by the keys of one call: the caps bound abuse, not a count to the key.
 */
export async function checkDataKeyLimits(
  db: Reader,
  knownFields: KnownFields,
  limits: DataKeyLimits,
  request: { projectId: string; email: string; patch: DataPatch },
): Promise<void> {
  const { projectId, email, patch } = request;
  if (Object.keys(patch.set).length === 0) return;
  // The registry's count only when a key may be new to the project (the cache knows the usual ones).
  const maybeNew = knownFields.unregistered(projectId, patch.set).map((field) => field.key);
  if (maybeNew.length > 0) {
    const { registered, known } = await projectFieldCounts(db, projectId, maybeNew);
    const added = maybeNew.length - known;
    if (added > 0 && registered + added > limits.perProject) {
      throw new DomainError(
        "invalid-argument",
        "FIELD_LIMIT_EXCEEDED",
        `This would give the project ${registered + added} contact fields; /v1/track may make at most ${limits.perProject}`,
        {
          details: { limit: String(limits.perProject), fields: String(registered), newFields: String(added) },
          suggestion: "Reuse the project's existing fields, or delete fields it no longer needs",
        },
      );
    }
  }
  const { before, after } = await contactKeyCounts(db, projectId, email, patch);
  if (after > before && after > limits.perContact) {
    throw new DomainError(
      "invalid-argument",
      "DATA_KEY_LIMIT_EXCEEDED",
      `This would give the contact ${after} data keys; /v1/track may store at most ${limits.perContact}`,
      {
        details: { limit: String(limits.perContact), keys: String(before), keysAfter: String(after) },
        suggestion: "Send fewer keys, or remove keys the contact no longer needs (send them as null)",
      },
    );
  }
}
