import type { SqlPool } from "./client.js";

export interface CommonTrigramsOptions {
  /**
   * A trigram is common when about this many addresses hold it. The index stores ~2,400 of them a page and reads
   * a page in ~8 µs, so 500,000 is a list of ~200 pages, ~2 ms; under it, a trigram is cheaper to read than to leave out.
   */
  minRows: number;
  /** Addresses sampled, about: at 10 million, a trigram of 500,000 is ~1,500 of them. */
  sampleRows: number;
}

export const commonTrigramDefaults: CommonTrigramsOptions = { minRows: 500_000, sampleRows: 30_000 };

/**
 * The trigrams (pg_trgm's, of word characters only) that about `minRows` or more addresses hold, over every project:
 * the trigram index is one for all of them. Read from a sample of the table's pages (TABLESAMPLE SYSTEM), scaled by
 * the planner's row count; none while the table is smaller than `minRows` or was never analyzed.
 */
export async function loadCommonTrigrams(pool: SqlPool, options = commonTrigramDefaults): Promise<Set<string>> {
  const { rows: sizes } = await pool.query<{ rows: number }>(
    "SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = 'contacts'::regclass",
  );
  const tableRows = sizes[0]?.rows ?? -1;
  if (tableRows < options.minRows) return new Set();
  const percent = Math.min(100, (100 * options.sampleRows) / tableRows);
  const { rows } = await pool.query<{ trigram: string; holders: string; sampled: string }>(
    `WITH sample AS (SELECT email FROM contacts TABLESAMPLE SYSTEM ($1))
     SELECT trigram, count(*) AS holders, (SELECT count(*) FROM sample) AS sampled
     FROM sample, unnest(show_trgm(email)) AS trigram
     GROUP BY trigram`,
    [percent],
  );
  const common = new Set<string>();
  for (const row of rows) {
    if ((Number(row.holders) / Number(row.sampled)) * tableRows >= options.minRows && /^[a-z0-9 ]{3}$/.test(row.trigram)) {
      common.add(row.trigram);
    }
  }
  return common;
}
