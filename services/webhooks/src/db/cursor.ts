/** A list's position: the last row's creation time and id, opaque to callers (base64url). */
export interface Position {
  createdAt: Date;
  id: string;
}

export const encodeCursor = (position: Position): string =>
  Buffer.from(`${position.createdAt.toISOString()}|${position.id}`, "utf8").toString("base64url");

/** The position a cursor names; undefined for one this service did not make (the list starts over rather than fail). */
export function decodeCursor(cursor: string): Position | undefined {
  if (!cursor) return undefined;
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const createdAt = new Date(at ?? "");
  if (!id || Number.isNaN(createdAt.getTime()) || id.length > 64) return undefined;
  return { createdAt, id };
}
