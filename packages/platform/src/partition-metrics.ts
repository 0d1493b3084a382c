import { defaultPartitionName, monthOfPartition, monthStart, partitionsOf, type TimePartitionedTable, withConnection } from "@herald/db";
import type { Metrics } from "./metrics.js";

/** The default partition's rows are counted up to this many: past it the number only says "far too many". */
const defaultRowsCountedAtMost = 100_000;

const monthsBetween = (from: Date, to: Date) => (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth();

/**
 * `herald_time_partition_months_ahead{schema, table}`: how many months past the current one the newest month
 * partition reaches (2 while maintenance keeps up; below 1, it has failed for weeks and new rows will soon land in the
 * default partition), and `herald_time_partition_default_rows{schema, table}`: rows in the default partition, which
 * every query of the table reads (0 normally; docs/operations.md "Time partitions and retention").
 */
export function observeTimePartitions(
  metrics: Metrics,
  options: { pool: Parameters<typeof withConnection>[0]; schema: string; tables: ReadonlyArray<Pick<TimePartitionedTable, "table">> },
): void {
  metrics.observe({
    reader: "time partitions",
    gauges: {
      herald_time_partition_months_ahead: {
        help: "Months past the current one that the newest month partition reaches (maintenance keeps 2)",
        labelNames: ["schema", "table"],
      },
      herald_time_partition_default_rows: {
        help: `Rows in the default partition, which every query reads (counted up to ${defaultRowsCountedAtMost})`,
        labelNames: ["schema", "table"],
      },
    },
    read: () =>
      withConnection(options.pool, async (client) => {
        const ahead = [];
        const defaults = [];
        const thisMonth = monthStart(new Date());
        for (const { table } of options.tables) {
          const labels = { schema: options.schema, table };
          const months = (await partitionsOf(client, table)).flatMap((name) => monthOfPartition(table, name) ?? []);
          const newest = months.reduce<Date | undefined>((latest, month) => (!latest || month > latest ? month : latest), undefined);
          ahead.push({ labels, value: newest ? monthsBetween(thisMonth, newest) : -1 });
          const { rows } = await client.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM (SELECT 1 FROM "${defaultPartitionName(table)}" LIMIT ${defaultRowsCountedAtMost}) AS counted`,
          );
          defaults.push({ labels, value: rows[0]?.n ?? 0 });
        }
        return { herald_time_partition_months_ahead: ahead, herald_time_partition_default_rows: defaults };
      }),
  });
}
