import { DomainError } from "@herald/errors";

/** A requested page size: 0 (unset) or less means the default, more than the maximum is clamped to it. */
export const pageLimit = (requested: number, limits: { fallback: number; max: number }): number =>
  requested <= 0 ? limits.fallback : Math.min(Math.trunc(requested), limits.max);

/** Cursors are opaque to clients: base64url of a small JSON value that only this service reads. */
export const encodeCursor = (position: unknown): string => Buffer.from(JSON.stringify(position)).toString("base64url");

export const invalidCursor = () =>
  new DomainError("invalid-argument", "INVALID_CURSOR", "The cursor is not one this list returned", {
    suggestion: "Start again without a cursor",
  });

/** The position a cursor holds, or INVALID_CURSOR when it is not one of ours (or belongs to another ordering). */
export function decodeCursor<T>(cursor: string, isPosition: (value: unknown) => value is T): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor();
  }
  if (!isPosition(value)) throw invalidCursor();
  return value;
}
