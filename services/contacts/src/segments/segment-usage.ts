import type { Reader } from "../db/client.js";
import { segmentsReferencing } from "../db/segments.js";

/** Something that references a field or an event name: a segment here; campaigns and workflows answer for theirs. */
export interface Usage {
  kind: "segment";
  id: string;
  name: string;
}

/** The segments whose conditions read a contact field (its top-level data key, as GET /contacts/fields names it). */
export async function segmentsUsingField(db: Reader, projectId: string, field: string): Promise<Usage[]> {
  const key = field.startsWith("data.") ? field.slice("data.".length) : field;
  return (await segmentsReferencing(db, projectId, { field: key })).map((segment) => ({ kind: "segment", ...segment }));
}

/** The segments whose conditions read an event name (event.<name>, or email.<kind> for email activity). */
export async function segmentsUsingEvent(db: Reader, projectId: string, name: string): Promise<Usage[]> {
  return (await segmentsReferencing(db, projectId, { event: name })).map((segment) => ({ kind: "segment", ...segment }));
}
