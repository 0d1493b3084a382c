import type { JsonObject } from "./contact-data.js";
import { patchOfData } from "./contact-data.js";
import { typeCsvValue } from "./csv-values.js";
import { isValidEmail, normalizeEmail } from "./email-address.js";

/**
 * Columns that never become data (SPEC.md "CSV import rules" 3), matched without
 * regard to case: the core fields and the generated URL variables. The reserved
 * data keys are dropped by the data rules as on every other path.
 */
const droppedColumns: ReadonlySet<string> = new Set(
  ["id", "subscribed", "createdAt", "updatedAt", "unsubscribeUrl", "subscribeUrl", "manageUrl"].map((name) => name.toLowerCase()),
);

export interface ImportColumns {
  emailIndex: number;
  width: number;
  /** The data columns: where each sits in a record and the key it fills. */
  data: Array<{ index: number; key: string }>;
}

export type ImportRowReason = "invalid_email" | "malformed_row";

export interface ImportRowError {
  /** The record's position among the data records, 1-based (the header row is not counted). */
  row: number;
  email: string;
  reason: ImportRowReason;
}

export type ImportRow = { row: number; email: string; data: JsonObject } | { row: number; error: ImportRowError };

/** The columns of a header row, or the reason the whole import fails. */
export function importColumnsOf(header: string[]): ImportColumns | { failure: string } {
  const names = header.map((name) => name.trim());
  const emailIndex = names.findIndex((name) => name.toLowerCase() === "email");
  if (emailIndex < 0) return { failure: 'The header row has no "email" column' };
  const data = names
    .map((key, index) => ({ index, key }))
    .filter(({ index, key }) => index !== emailIndex && key !== "" && !droppedColumns.has(key.toLowerCase()));
  return { emailIndex, width: names.length, data };
}

/**
 * One data record as a contact write: its normalised email and the data its cells
 * set, typed and passed through the data rules; or why the row is skipped. A record
 * whose column count differs from the header's is malformed: its cells cannot be
 * matched to columns with confidence.
 */
export function importRowOf(columns: ImportColumns, record: string[], row: number): ImportRow {
  const email = normalizeEmail(record[columns.emailIndex] ?? "");
  if (record.length !== columns.width) return { row, error: { row, email, reason: "malformed_row" } };
  if (!isValidEmail(email)) return { row, error: { row, email, reason: "invalid_email" } };
  const cells: JsonObject = {};
  for (const { index, key } of columns.data) cells[key] = typeCsvValue(record[index] ?? "");
  return { row, email, data: patchOfData(cells).set };
}
