import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@fastify/type-provider-typebox";

/** Pieces every route file uses: timestamps, nullable schemas, lenient page sizes. */

export const iso = (timestamp: Timestamp | undefined): string | null => (timestamp ? timestampDate(timestamp).toISOString() : null);

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const DateTime = Type.String({ format: "date-time" });

/** A page size from a query string: unparsable or non-positive is the default, larger than 100 is 100. */
export const limitOf = (raw: string | undefined, fallback: number): number => {
  const value = Number.parseInt(raw ?? "", 10);
  return Number.isFinite(value) && value > 0 ? Math.min(value, 100) : fallback;
};
