import { withConnection } from "@herald/db";
import type pg from "pg";
import { insertEmails, insertEmailsUnlessCapped, type NewEmailRow, type StoredEmail } from "../db/emails.js";
import { lockCapStandings, storedIdempotencyKeys } from "../db/monthly-usage.js";
import { type CapExceeded, type CapStanding, exceededBy, spend, wantedOf } from "../domain/billing-caps.js";

/** One call's answer: its emails (the earlier ones for repeated idempotency keys), or the cap it would go past. */
export type StoredOrRefused = StoredEmail[] | { exceeded: CapExceeded };

const distinctPairs = (rows: readonly NewEmailRow[]) => {
  const pairs = new Map<string, { projectId: string; category: string }>();
  for (const row of rows) pairs.set(`${row.projectId} ${row.category}`, { projectId: row.projectId, category: row.category });
  return [...pairs.values()];
};

/** What a call adds per capped category: its emails, less those whose idempotency key is stored already (a repeat). */
async function newlyWanted(client: pg.ClientBase, rows: readonly NewEmailRow[]): Promise<Map<string, number>> {
  const keys = rows.flatMap((row) => (row.idempotencyKey === null ? [] : [row.idempotencyKey]));
  const [first] = rows;
  if (!first || keys.length === 0) return wantedOf(rows);
  const stored = await storedIdempotencyKeys(client, first.projectId, keys);
  return wantedOf(rows.filter((row) => row.idempotencyKey === null || !stored.has(row.idempotencyKey)));
}

/**
 * Stores the calls' emails (each call is one project's, all or none), refusing a call that
 * would take a category past the project's monthly cap.
 *
 * Without a cap among the calls' categories (the usual case) it is one statement, which
 * also counts the month's usage (insertEmailsUnlessCapped). With one, that statement stores
 * nothing, and the usage rows of the calls' categories are locked first, in one transaction
 * with the insert: every delivery replica that enqueues for that project and category waits
 * for the lock, sees what the others stored, and decides on it, so concurrent calls never go
 * past a cap together. A call that would go past is first forgiven the emails it repeats
 * (idempotency keys already stored: a resumed campaign batch), then refused whole.
 */
export async function storeWithinCaps(pool: pg.Pool, calls: ReadonlyArray<readonly NewEmailRow[]>): Promise<StoredOrRefused[]> {
  const stored = await insertEmailsUnlessCapped(pool, calls.flat());
  if (stored) return splitByCall(calls, stored);

  return withConnection(pool, async (client) => {
    try {
      await client.query("BEGIN");
      const standings: Map<string, CapStanding> = await lockCapStandings(client, distinctPairs(calls.flat()));
      const answers: Array<StoredOrRefused | undefined> = [];
      const granted: Array<readonly NewEmailRow[]> = [];
      for (const rows of calls) {
        let wanted = wantedOf(rows);
        let exceeded = exceededBy(wanted, standings);
        if (exceeded) {
          wanted = await newlyWanted(client, rows);
          exceeded = exceededBy(wanted, standings);
        }
        if (exceeded) {
          answers.push({ exceeded });
          continue;
        }
        spend(wanted, standings);
        answers.push(undefined);
        granted.push(rows);
      }
      const stored = granted.length === 0 ? [] : splitByCall(granted, await insertEmails(client, granted.flat()));
      await client.query("COMMIT");
      let next = 0;
      return answers.map((answer) => answer ?? (stored[next++] as StoredOrRefused));
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  });
}

function splitByCall<T>(calls: ReadonlyArray<readonly unknown[]>, results: T[]): T[][] {
  let next = 0;
  return calls.map((rows) => {
    const first = next;
    next += rows.length;
    return results.slice(first, next);
  });
}
