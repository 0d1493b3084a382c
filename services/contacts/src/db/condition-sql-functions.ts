import { isoDatePattern } from "@herald/conditions";

/**
 * The SQL function compiled conditions call, created in this service's schema by
 * the migration 20261123020502_segments. An IMMUTABLE SQL function that PostgreSQL
 * inlines, and that cannot raise an error for any input: it casts nothing.
 *
 * herald_condition_instant(value, date_time_only) is the canonical instant text
 * `YYYY-MM-DDTHH:MM:SS.sssZ` of a JSON string that is an ISO date (isoDatePattern
 * of @herald/conditions: `YYYY-MM-DD`, midnight UTC, or `YYYY-MM-DDTHH:MM:SS[.sss]Z`,
 * a real day and time), or NULL; with date_time_only, `YYYY-MM-DD` gives NULL too.
 * It is the package's canonicalInstant in SQL; fixed width, so text order
 * (COLLATE "C") is time order.
 */
export const conditionSqlFunctions = `
CREATE OR REPLACE FUNCTION herald_condition_instant(value jsonb, date_time_only boolean) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN jsonb_typeof(value) = 'string'
      AND (value #>> '{}') ~ '${isoDatePattern}'
      AND (length(value #>> '{}') > 10 OR NOT date_time_only)
    THEN CASE length(value #>> '{}')
      WHEN 10 THEN (value #>> '{}') || 'T00:00:00.000Z'
      WHEN 20 THEN left(value #>> '{}', 19) || '.000Z'
      ELSE value #>> '{}'
    END
  END
$$;
`;
