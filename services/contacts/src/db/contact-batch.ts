import { composeDataPatches, type DataPatch, type JsonObject } from "../domain/contact-data.js";
import type { FieldType } from "../domain/field-type.js";
import { inFieldLockOrder } from "./contact-fields.js";
import { Prisma } from "./generated/client.js";

/** What every write of a multi-contact statement carries: whose contact, its patch, the keys it may register. */
export interface ContactBatchWrite {
  projectId: string;
  /** Normalised and valid. */
  email: string;
  patch: DataPatch;
  /** Keys of `patch.set` the registry may not know yet, with the type their value implies. */
  newFields: Array<{ key: string; type: FieldType }>;
}

// Project ids compared as Postgres writes uuids: lower case.
export const contactKey = (projectId: string, email: string) => `${projectId.toLowerCase()} ${email}`;

/**
 * The rows of a batch statement: each contact once, with its writes' patches composed in order
 * (and its first write, for what else the statement takes from it), and the keys to register,
 * each once, in lock order.
 */
export function contactBatchOf<Write extends ContactBatchWrite>(
  writes: readonly Write[],
): {
  contacts: Array<{ first: Write; set: JsonObject; remove: string[] }>;
  newFields: Array<{ projectId: string; key: string; type: FieldType }>;
} {
  const contacts = new Map<string, { first: Write; patches: DataPatch[] }>();
  const fields = new Map<string, { projectId: string; key: string; type: FieldType }>();
  for (const write of writes) {
    const key = contactKey(write.projectId, write.email);
    const contact = contacts.get(key) ?? { first: write, patches: [] };
    contact.patches.push(write.patch);
    contacts.set(key, contact);
    for (const field of write.newFields) {
      const fieldKey = contactKey(write.projectId, field.key);
      if (!fields.has(fieldKey)) fields.set(fieldKey, { projectId: write.projectId, ...field });
    }
  }
  return {
    contacts: [...contacts.values()].map(({ first, patches }) => ({ first, ...composeDataPatches(patches) })),
    newFields: inFieldLockOrder([...fields.values()]),
  };
}

/**
 * Each write's contact, in the batch's order, from the rows the statement returned (by project
 * and email); of several writes for a contact the statement created, the first reports it created.
 */
export function perWrite<Write extends ContactBatchWrite, Row extends { projectId: string; email: string; created: boolean }, Out>(
  writes: readonly Write[],
  rows: readonly Row[],
  answer: (write: Write, row: Row, created: boolean) => Out,
): Out[] {
  const written = new Map(rows.map((row) => [contactKey(row.projectId, row.email), row]));
  const reported = new Set<string>();
  return writes.map((write) => {
    const key = contactKey(write.projectId, write.email);
    const row = written.get(key);
    if (!row) throw new Error(`the batch wrote no contact for ${write.email}`);
    const created = row.created && !reported.has(key);
    reported.add(key);
    return answer(write, row, created);
  });
}

/** The statement that registers a batch's new keys (of two first values racing, one type wins). */
export const registerFieldsOf = (newFields: ReturnType<typeof contactBatchOf>["newFields"]) => Prisma.sql`
  INSERT INTO contact_fields (project_id, key, type)
  SELECT * FROM unnest(
    ${newFields.map((field) => field.projectId)}::uuid[],
    ${newFields.map((field) => field.key)}::text[],
    ${newFields.map((field) => field.type)}::text[]
  )
  ON CONFLICT (project_id, key) DO NOTHING`;
