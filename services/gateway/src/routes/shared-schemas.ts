import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@fastify/type-provider-typebox";
import { HttpProblem } from "../http/errors.js";

/** Pieces every route file uses: timestamps, nullable schemas, lenient page sizes. */

export const iso = (timestamp: Timestamp | undefined): string | null => (timestamp ? timestampDate(timestamp).toISOString() : null);

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const DateTime = Type.String({ format: "date-time" });

/** A page size from a query string: unparsable or non-positive is the default, larger than 100 is 100. */
export const limitOf = (raw: string | undefined, fallback: number): number => {
  const value = Number.parseInt(raw ?? "", 10);
  return Number.isFinite(value) && value > 0 ? Math.min(value, 100) : fallback;
};

/** The largest page number an RPC's int32 field carries; a larger one is refused, never wrapped. */
export const maxPage = 2 ** 31 - 1;

/** A query parameter that cannot be used: 400 `BAD_REQUEST` naming it, with `invalid_query`. */
export const badQuery = (parameter: string, message: string, received: string) =>
  new HttpProblem({
    statusCode: 400,
    code: "BAD_REQUEST",
    message: `Invalid query parameter ${parameter}: ${message}`,
    errors: [{ field: parameter, message, code: "invalid_query", received: JSON.stringify(received) }],
  });

/** A page number read leniently: unparsable or below 1 is the first page; past `maxPage` is a 400. */
export const lenientPageOf = (parameter: string, raw: string | undefined): number => {
  const value = Number.parseInt(raw ?? "", 10);
  if (!Number.isFinite(value) || value < 1) return 1;
  if (value > maxPage) throw badQuery(parameter, `must be at most ${maxPage}`, raw ?? "");
  return value;
};

/** page and pageSize of an offset list: absent is the default; anything but a whole number from 1 to 2^31 − 1 is a 400. */
export function positiveIntegerOf(parameter: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > maxPage) {
    throw badQuery(parameter, `must be a whole number from 1 to ${maxPage}`, raw);
  }
  return Number(raw);
}
