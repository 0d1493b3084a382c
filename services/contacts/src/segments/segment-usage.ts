import type { Reader } from "../db/client.js";

/** Something that references a field or an event name: a segment here; campaigns and workflows answer for theirs. */
export interface Usage {
  kind: "segment";
  id: string;
  name: string;
}

/**
 * The segments whose conditions reference a contact field. This service stores no
 * segments yet, so nothing references any field; the segment store answers here
 * once it exists, and the RPCs need not change.
 */
export async function segmentsUsingField(_db: Reader, _projectId: string, _field: string): Promise<Usage[]> {
  return [];
}

/** The segments whose conditions reference an event name; none while no segments are stored (as above). */
export async function segmentsUsingEvent(_db: Reader, _projectId: string, _name: string): Promise<Usage[]> {
  return [];
}
