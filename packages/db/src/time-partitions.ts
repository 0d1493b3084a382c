import type pg from "pg";
import { withConnection } from "./sql-pool.js";

/**
 * A table RANGE-partitioned by month on a timestamp column (plain declarative partitioning, no extension):
 * partitions are named `<table>_pYYYYMM` and hold [first of the month, first of the next) in UTC, and
 * `<table>_default` catches whatever no month partition covers (a far-future or long-past timestamp), so that an
 * insert never fails for want of a partition.
 */
export interface TimePartitionedTable {
  table: string;
  /** The partition key: a timestamptz column. */
  column: string;
  /** Rows older than this many days may go: a partition whose whole month is older is dropped (the deployment's longest window). */
  retainDays: number;
  /**
   * Rows kept however old, as an SQL condition on the table's columns (delivery's unsent emails): a month that holds
   * one is not dropped, and the default partition's are not deleted.
   */
  keep?: string;
}

export interface PartitionMaintenanceOptions {
  now?: Date;
  /** Months created ahead of the current one. Default 2. */
  monthsAhead?: number;
  /** How long a DDL statement waits for its lock before giving up until the next pass. Default 2 s. */
  lockTimeoutMs?: number;
  /** Rows of the default partition deleted per statement once older than the window. Default 1,000. */
  batchSize?: number;
}

export interface PartitionMaintenanceResult {
  created: string[];
  dropped: string[];
  /** Rows moved out of the default partition into the month partition created for them. */
  moved: number;
  /** Expired rows deleted from the default partition. */
  expired: number;
  /** False when another replica held the maintenance lock: this pass did nothing. */
  ran: boolean;
}

const dayMs = 86_400_000;

/** The first instant of the UTC month `offset` months after the one holding `at`. */
export function monthStart(at: Date, offset = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1));
}

export function partitionName(table: string, month: Date): string {
  return `${table}_p${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, "0")}`;
}

export function defaultPartitionName(table: string): string {
  return `${table}_default`;
}

/** The month a partition of ours holds, from its name; undefined for any other table. */
export function monthOfPartition(table: string, name: string): Date | undefined {
  const prefix = `${table}_p`;
  if (!name.startsWith(prefix)) return undefined;
  const digits = name.slice(prefix.length);
  if (digits.length !== 6 || !/^\d+$/.test(digits)) return undefined;
  return new Date(Date.UTC(Number(digits.slice(0, 4)), Number(digits.slice(4)) - 1, 1));
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/** The partitions of a table in the connection's schema. */
export async function partitionsOf(client: pg.ClientBase, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = to_regclass($1) ORDER BY c.relname`,
    [quote(table)],
  );
  return rows.map((row) => row.name);
}

/** Whether a table (a partition) holds a row that matches an SQL condition on its columns: one probe, the first row found. */
async function holds(client: pg.ClientBase, table: string, condition: string): Promise<boolean> {
  const { rows } = await client.query<{ held: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${quote(table)} WHERE ${condition}) AS held`);
  return rows[0]?.held ?? false;
}

/**
 * The first instant of the oldest month whose partition holds a row that matches `condition` (an SQL condition on the
 * table's columns), among the months that start before `before`; or the time of the oldest such row of the default
 * partition, when it is older. Undefined when neither holds one. One probe per month, oldest first, to the first that
 * holds one.
 */
export async function oldestHolding(
  client: pg.ClientBase,
  spec: Pick<TimePartitionedTable, "table" | "column">,
  condition: string,
  before: Date,
): Promise<Date | undefined> {
  const { rows } = await client.query<{ oldest: Date | null }>(
    `SELECT min(${quote(spec.column)}) AS oldest FROM ${quote(defaultPartitionName(spec.table))} WHERE ${condition}`,
  );
  const stray = rows[0]?.oldest ?? undefined;
  const months = (await partitionsOf(client, spec.table))
    .map((name) => ({ name, month: monthOfPartition(spec.table, name) }))
    .filter((partition): partition is { name: string; month: Date } => partition.month !== undefined && partition.month < before)
    .sort((a, b) => a.month.getTime() - b.month.getTime());
  for (const { name, month } of months) {
    if (stray && stray <= month) break;
    if (await holds(client, name, condition)) return month;
  }
  return stray;
}

async function inTransaction<T>(client: pg.ClientBase, lockTimeoutMs: number, work: () => Promise<T>): Promise<T> {
  await client.query("BEGIN");
  try {
    // A DDL statement queued behind a long query would block every query queued behind it: give up instead.
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
}

/** The default partition, when the table has none (a table converted by hand, say). */
export async function ensureDefaultPartition(client: pg.ClientBase, table: string, lockTimeoutMs = 2_000): Promise<boolean> {
  const name = defaultPartitionName(table);
  if ((await partitionsOf(client, table)).includes(name)) return false;
  await inTransaction(client, lockTimeoutMs, () => client.query(`CREATE TABLE ${quote(name)} PARTITION OF ${quote(table)} DEFAULT`));
  return true;
}

/**
 * Creates one month's partition, without blocking the table's readers and writers: the new table is built
 * apart, filled with the default partition's rows of that month (there are none, usually), and attached, which
 * takes only a SHARE UPDATE EXCLUSIVE lock on the parent; the CHECK constraint spares the attach its scan of it.
 */
async function createMonthPartition(
  client: pg.ClientBase,
  spec: TimePartitionedTable,
  month: Date,
  lockTimeoutMs: number,
): Promise<number> {
  const name = quote(partitionName(spec.table, month));
  const table = quote(spec.table);
  const column = quote(spec.column);
  const from = month.toISOString();
  const to = monthStart(month, 1).toISOString();
  const check = quote(`${partitionName(spec.table, month)}_range`);
  return inTransaction(client, lockTimeoutMs, async () => {
    await client.query(`CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`);
    await client.query(`ALTER TABLE ${name} ADD CONSTRAINT ${check} CHECK (${column} >= '${from}' AND ${column} < '${to}')`);
    const defaults = quote(defaultPartitionName(spec.table));
    const hasDefault = (await partitionsOf(client, spec.table)).includes(defaultPartitionName(spec.table));
    let moved = 0;
    if (hasDefault) {
      const result = await client.query(
        `WITH moved AS (DELETE FROM ${defaults} WHERE ${column} >= $1 AND ${column} < $2 RETURNING *)
         INSERT INTO ${name} SELECT * FROM moved`,
        [from, to],
      );
      moved = result.rowCount ?? 0;
    }
    await client.query(`ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM ('${from}') TO ('${to}')`);
    await client.query(`ALTER TABLE ${name} DROP CONSTRAINT ${check}`);
    return moved;
  });
}

/**
 * One maintenance pass over a service's partitioned tables: creates the current month and `monthsAhead` ahead, drops the partitions whose whole month left the window, and deletes the default
 * partition's expired rows in batches. Safe with several replicas: a pass runs only under a session advisory lock
 * of the schema, and the others skip. A lock it cannot get in `lockTimeoutMs` fails the pass, to be retried.
 */
export async function maintainTimePartitions(
  pool: pg.Pool,
  tables: TimePartitionedTable[],
  options: PartitionMaintenanceOptions = {},
): Promise<PartitionMaintenanceResult> {
  const now = options.now ?? new Date();
  const monthsAhead = options.monthsAhead ?? 2;
  const lockTimeoutMs = options.lockTimeoutMs ?? 2_000;
  const batchSize = options.batchSize ?? 1_000;
  const result: PartitionMaintenanceResult = { created: [], dropped: [], moved: 0, expired: 0, ran: false };
  return withConnection(pool, async (client) => {
    const { rows } = await client.query<{ locked: boolean }>(
      "SELECT pg_try_advisory_lock(hashtext(current_schema() || '.time-partitions')) AS locked",
    );
    if (!rows[0]?.locked) return result;
    result.ran = true;
    try {
      for (const spec of tables) {
        await ensureDefaultPartition(client, spec.table, lockTimeoutMs);
        const cutoff = new Date(now.getTime() - spec.retainDays * dayMs);
        const existing = new Set(await partitionsOf(client, spec.table));
        // From the current month only: a past month without a partition (a deployment that ran with none) keeps its
        // rows in the default partition until they expire, rather than a long window asking for years of empty tables.
        for (let month = monthStart(now); month <= monthStart(now, monthsAhead); month = monthStart(month, 1)) {
          const name = partitionName(spec.table, month);
          if (existing.has(name)) continue;
          result.moved += await createMonthPartition(client, spec, month, lockTimeoutMs);
          result.created.push(name);
        }
        for (const name of existing) {
          const month = monthOfPartition(spec.table, name);
          if (!month || monthStart(month, 1) > cutoff) continue;
          const dropped = await inTransaction(client, lockTimeoutMs, async () => {
            if (spec.keep && (await holds(client, name, spec.keep))) return false;
            await client.query(`DROP TABLE ${quote(name)}`);
            return true;
          });
          if (dropped) result.dropped.push(name);
        }
        const defaults = quote(defaultPartitionName(spec.table));
        const column = quote(spec.column);
        for (;;) {
          const deleted = await client.query(
            `DELETE FROM ${defaults} WHERE ctid IN (
               SELECT ctid FROM ${defaults} WHERE ${column} < $1 ${spec.keep ? `AND NOT (${spec.keep})` : ""} LIMIT ${batchSize})`,
            [cutoff.toISOString()],
          );
          result.expired += deleted.rowCount ?? 0;
          if ((deleted.rowCount ?? 0) < batchSize) break;
        }
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtext(current_schema() || '.time-partitions'))");
    }
    return result;
  });
}
