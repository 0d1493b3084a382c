import { DomainError } from "@herald/errors";
import type { Db } from "../db/client.js";
import {
  anyContactHasKey,
  countKeyCoverage,
  type FieldColumn,
  findRegisteredField,
  listDistinctValues,
  listRegisteredFields,
  removeKeyFromBatch,
  unregisterField,
} from "../db/contact-fields.js";
import type { JsonValue } from "../domain/contact-data.js";
import { customFieldName, type FieldName, parseFieldName, type StandardField, standardFields } from "../domain/field-names.js";
import { type FieldType, isFieldType } from "../domain/field-type.js";
import { requireProjectId } from "../domain/ids.js";
import { decodeCursor, encodeCursor, pageLimit } from "../domain/paging.js";
import { segmentsUsingField, type Usage } from "../segments/segment-usage.js";
import type { KnownFields } from "./known-fields.js";

export interface FieldDescriptor {
  field: string;
  type: FieldType;
  isCustom: boolean;
  coverage: number;
}

export const fieldValuePageLimits = { fallback: 50, max: 100 };

/** Contacts changed per statement when a field is deleted: short enough that no row stays locked for long. */
export const fieldDeleteBatchSize = 1_000;

export interface Fields {
  list(projectId: string): Promise<FieldDescriptor[]>;
  values(
    projectId: string,
    field: string,
    page: { limit: number; cursor: string },
  ): Promise<{ values: JsonValue[]; cursor: string; hasMore: boolean }>;
  usage(projectId: string, field: string): Promise<Usage[]>;
  delete(projectId: string, field: string): Promise<{ contactsUpdated: number }>;
}

const fieldNotFound = (field: string) =>
  new DomainError("not-found", "FIELD_NOT_FOUND", `Field ${field} not found`, { details: { field } });

const standardColumns: Record<StandardField, FieldColumn> = {
  email: "email",
  subscribed: "subscribed",
  createdAt: "created_at",
  updatedAt: "updated_at",
};

// A values cursor is the last value of the page, as JSON text.
const isValueCursor = (value: unknown): value is { after: string } =>
  typeof value === "object" && value !== null && typeof (value as { after?: unknown }).after === "string";

export function createFields(deps: { db: Db; knownFields: KnownFields }): Fields {
  const { db } = deps;

  /** The field a name refers to: a standard one, or a data key that is registered or present on a contact. */
  async function existingField(projectId: string, name: string): Promise<FieldName> {
    requireProjectId(projectId);
    const field = parseFieldName(name);
    if (!field) throw fieldNotFound(name);
    if (
      field.kind === "custom" &&
      !(await findRegisteredField(db, projectId, field.key)) &&
      !(await anyContactHasKey(db, projectId, field.key))
    ) {
      throw fieldNotFound(name);
    }
    return field;
  }

  return {
    async list(projectId) {
      requireProjectId(projectId);
      const [registered, coverage] = await Promise.all([listRegisteredFields(db, projectId), countKeyCoverage(db, projectId)]);
      const custom = registered.map(({ key, type }) => ({
        field: customFieldName(key),
        type: isFieldType(type) ? type : "string",
        isCustom: true,
        coverage: coverage.contacts === 0 ? 0 : (coverage.withKey.get(key) ?? 0) / coverage.contacts,
      }));
      return [...standardFields.map(({ field, type }) => ({ field, type, isCustom: false, coverage: 1 })), ...custom];
    },

    async values(projectId, name, page) {
      const field = await existingField(projectId, name);
      const limit = pageLimit(page.limit, fieldValuePageLimits);
      const after = page.cursor ? decodeCursor(page.cursor, isValueCursor).after : undefined;
      const column = field.kind === "standard" ? standardColumns[field.field] : { key: field.key };
      const rows = (await listDistinctValues(db, projectId, column, { after, limit: limit + 1 })) as JsonValue[];
      const values = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      return { values, hasMore, cursor: hasMore ? encodeCursor({ after: JSON.stringify(values.at(-1) ?? null) }) : "" };
    },

    async usage(projectId, name) {
      await existingField(projectId, name);
      return segmentsUsingField(db, projectId, name);
    },

    async delete(projectId, name) {
      const parsed = parseFieldName(name);
      if (parsed?.kind === "standard") {
        throw new DomainError("invalid-argument", "FIELD_NOT_DELETABLE", `${name} is a standard field and cannot be deleted`, {
          details: { field: name },
        });
      }
      const field = await existingField(projectId, name);
      if (field.kind !== "custom") throw fieldNotFound(name);
      let contactsUpdated = 0;
      let after: { createdAt: Date; id: string } | undefined;
      do {
        const batch = await removeKeyFromBatch(db, projectId, field.key, { after, limit: fieldDeleteBatchSize });
        contactsUpdated += batch.updated;
        after = batch.last;
      } while (after);
      await unregisterField(db, projectId, field.key);
      deps.knownFields.forget(projectId, field.key);
      return { contactsUpdated };
    },
  };
}
