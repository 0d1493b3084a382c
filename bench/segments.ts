// Segment benchmarks (issue: condition trees and segments): seeds 1,000,000 contacts
// and 5,000,000 events straight into the contacts schema, then measures a refresh,
// a compute of a 100,000-member tracked segment and a 1,000,000-contact audience stream.
import { createClient } from "@connectrpc/connect";
import { validateCondition } from "@herald/conditions";
import { compileCondition } from "@herald/contacts/condition-sql";
import { createRpcTransport } from "@herald/platform";
import { SegmentsService } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import pg from "pg";

const contactCount = Number(process.env.BENCH_SEGMENT_CONTACTS ?? 1_000_000);
const eventsPerContact = 5;

export interface SegmentBenchTarget {
  gatewayUrl: string;
  contactsUrl: string;
  databaseUrl: string;
  secretKey: string;
  projectId: string;
}

const seconds = (started: number) => (performance.now() - started) / 1000;

/**
 * Loads a table the way a restore does: its keys, indexes and the foreign keys on or
 * to it are dropped, the rows inserted, then everything is built again in one pass
 * each (sorted builds instead of 5,000,000 random B-tree and GIN insertions).
 */
export async function bulkLoad(client: pg.Client, table: string, load: () => Promise<unknown>): Promise<void> {
  const { rows: constraints } = await client.query<{ owner: string; name: string; definition: string; kind: string }>(
    `SELECT conrelid::regclass::text AS owner, conname AS name, pg_get_constraintdef(oid) AS definition, contype AS kind
     FROM pg_constraint WHERE conparentid = 0 -- a partition's copy of a constraint goes and comes back with its parent's
       AND ((conrelid = $1::regclass AND contype IN ('p', 'u', 'f')) OR (confrelid = $1::regclass AND contype = 'f'))`,
    [table],
  );
  const { rows: indexes } = await client.query<{ name: string; definition: string }>(
    `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
     WHERE schemaname = current_schema() AND tablename = $1 AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass)`,
    [table],
  );
  const foreign = constraints.filter((constraint) => constraint.kind === "f");
  const keys = constraints.filter((constraint) => constraint.kind !== "f");
  for (const constraint of [...foreign, ...keys]) {
    await client.query(`ALTER TABLE ${constraint.owner} DROP CONSTRAINT ${constraint.name}`);
  }
  for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
  await load();
  for (const constraint of keys) {
    await client.query(`ALTER TABLE ${constraint.owner} ADD CONSTRAINT ${constraint.name} ${constraint.definition}`);
  }
  // A partitioned table's index reads back as `ON ONLY`, which would build it on the parent alone, left invalid and
  // unused; built without ONLY, it is built on every partition too.
  for (const index of indexes) await client.query(index.definition.replace(" ON ONLY ", " ON "));
  for (const constraint of foreign) {
    await client.query(`ALTER TABLE ${constraint.owner} ADD CONSTRAINT ${constraint.name} ${constraint.definition}`);
  }
}

/**
 * Runs `load` with contacts' contact.created trigger off, as a restore loads rows: seeded contacts are not news, and
 * millions of change events in the outbox would be published, and consumed, while the measures run.
 */
export async function withoutChangeEvents(client: pg.Client, load: () => Promise<unknown>): Promise<void> {
  await client.query("ALTER TABLE contacts DISABLE TRIGGER contacts_created");
  try {
    await load();
  } finally {
    await client.query("ALTER TABLE contacts ENABLE TRIGGER contacts_created");
  }
}

/**
 * Realistic-looking data generated in Postgres itself (one INSERT … SELECT per table):
 * a plan, a country, a numeric score, an ISO signup date-time, a key with a space and
 * a nested object; events drawn from 20 names over the last 180 days.
 */
async function seed(client: pg.Client, projectId: string): Promise<string> {
  const started = performance.now();
  await client.query("SET synchronous_commit = off; SET maintenance_work_mem = '1GB'");
  await withoutChangeEvents(client, () =>
    bulkLoad(client, "contacts", () =>
      client.query(
        `INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at)
         SELECT gen_random_uuid(), $1::uuid, 'user' || i || '@seed.test', i % 10 <> 0,
           jsonb_build_object(
             'plan', (ARRAY['free','starter','pro','enterprise'])[1 + i % 4],
             'country', (ARRAY['US','DE','FR','GB','ES','IT','NL','SE','PL','BR','IN','JP','CA','AU','MX','AR','ZA','NG','KR','SG'])[1 + i % 20],
             'score', (i::bigint * 7919) % 1000,
             'signedUpAt', to_char(timestamptz '2026-11-01' - (i % 720) * interval '1 day', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'first name', 'Name' || (i % 5000),
             'address', jsonb_build_object('city', 'City' || (i % 300))
           ),
           now() - (i % 365) * interval '1 day', now()
         FROM generate_series(1, $2::int) AS i`,
        [projectId, contactCount],
      ),
    ),
  );
  const contactsSeconds = seconds(started);
  await bulkLoad(client, "events", () =>
    client.query(
      `INSERT INTO events (id, project_id, contact_id, name, data, created_at)
       SELECT gen_random_uuid(), c.project_id, c.id, 'event.' || ((k * 13 + abs(hashtext(c.email))) % 20), '{}'::jsonb,
              now() - ((abs(hashtext(c.email)) + k * 37) % 180) * interval '1 day'
       FROM contacts c, generate_series(1, $2::int) AS k WHERE c.project_id = $1::uuid`,
      [projectId, eventsPerContact],
    ),
  );
  await client.query("ANALYZE contacts; ANALYZE events; RESET synchronous_commit; RESET maintenance_work_mem");
  return `| seed ${contactCount.toLocaleString("en")} contacts + ${(contactCount * eventsPerContact).toLocaleString("en")} events | INSERT … SELECT each, keys and indexes built after | ${seconds(started).toFixed(0)} s in all (contacts ${contactsSeconds.toFixed(0)} s) | goal under 5 min |`;
}

async function rest<T>(target: SegmentBenchTarget, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${target.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${target.secretKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10 * 60_000),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function explain(client: pg.Client, sql: string, values: unknown[]): Promise<string> {
  const { rows } = await client.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${sql}`, values);
  return rows.map((row) => `    ${row["QUERY PLAN"]}`).join("\n");
}

/** The plan of the count a refresh runs: the condition compiled as the contacts service compiles it. */
function explainCondition(client: pg.Client, projectId: string, tree: unknown): Promise<string> {
  const validation = validateCondition(tree, { fieldType: () => undefined });
  if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
  const compiled = compileCondition(validation.tree, {
    now: new Date(),
    fieldType: () => undefined,
    segment: () => undefined,
    firstParameter: 2,
  });
  return explain(client, `SELECT count(*) FROM contacts c WHERE c.project_id = $1::uuid AND (${compiled.sql})`, [
    projectId,
    ...compiled.values,
  ]);
}

export async function segmentBenchmarks(target: SegmentBenchTarget): Promise<{ rows: string[]; plans: string }> {
  const url = new URL(target.databaseUrl);
  url.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: url.toString(), options: "-c search_path=contacts" });
  await client.connect();
  try {
    const rows = [await seed(client, target.projectId)];

    const threeFilters = {
      logic: "AND",
      groups: [
        {
          filters: [
            { field: "data.plan", operator: "equals", value: "pro" },
            { field: "data.score", operator: "gt", value: 500 },
            { field: "event.event.3", operator: "triggeredWithin", value: 30, unit: "days" },
          ],
        },
      ],
    };
    const refreshed = await rest<{ id: string }>(target, "POST", "/segments", { name: "Bench three filters", condition: threeFilters });
    const timings: number[] = [];
    let members = 0;
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      members = (await rest<{ memberCount: number }>(target, "POST", `/segments/${refreshed.id}/refresh`)).memberCount;
      timings.push(seconds(started));
    }
    timings.sort((a, b) => a - b);
    rows.push(
      `| POST /segments/:id/refresh, 3 filters (equals, gt, triggeredWithin) | 5 runs | median ${(timings[2] ?? 0).toFixed(2)} s, best ${(timings[0] ?? 0).toFixed(2)} s | ${members.toLocaleString("en")} members; goal under 1 s |`,
    );

    // 100,000 members: two countries of twenty, so the first compute emits 100,000 entries.
    const tracked = await rest<{ id: string }>(target, "POST", "/segments", {
      name: "Bench tracked",
      condition: {
        logic: "OR",
        groups: ["DE", "FR"].map((country) => ({ filters: [{ field: "data.country", operator: "equals", value: country }] })),
      },
    });
    await client.query("UPDATE segments SET track_membership = true WHERE id = $1::uuid", [tracked.id]);
    let started = performance.now();
    const computed = await rest<{ added: number; total: number }>(target, "POST", `/segments/${tracked.id}/compute`);
    rows.push(
      `| POST /segments/:id/compute, first run (all entries) | one call | ${seconds(started).toFixed(1)} s | ${computed.added.toLocaleString("en")} entries (events + outbox rows); goal under 30 s |`,
    );
    await client.query(
      `UPDATE contacts SET data = data || '{"country":"US"}' WHERE id IN (SELECT contact_id FROM segment_members WHERE segment_id = $1::uuid LIMIT 1000)`,
      [tracked.id],
    );
    started = performance.now();
    const recomputed = await rest<{ added: number; removed: number }>(target, "POST", `/segments/${tracked.id}/compute`);
    rows.push(
      `| POST /segments/:id/compute, 1,000 exits | one call | ${seconds(started).toFixed(1)} s | ${recomputed.removed} exits, ${recomputed.added} entries |`,
    );

    const segments = createClient(SegmentsService, createRpcTransport({ baseUrl: target.contactsUrl, timeoutMs: 10 * 60_000 }));
    started = performance.now();
    let streamed = 0;
    for await (const batch of segments.streamAudience({
      projectId: target.projectId,
      audience: { kind: { case: "all", value: {} } },
      batchSize: 5_000,
    })) {
      streamed += batch.contacts.length;
    }
    const streamSeconds = seconds(started);
    rows.push(
      `| StreamAudience (gRPC), ALL, batches of 5,000 | one stream | ${Math.round(streamed / streamSeconds).toLocaleString("en")} contacts/s | ${streamed.toLocaleString("en")} subscribed contacts in ${streamSeconds.toFixed(1)} s; goal over 50,000/s |`,
    );

    const plans = [
      "Refresh (count) of the three-filter segment:",
      await explainCondition(client, target.projectId, threeFilters),
      "One audience batch:",
      await explain(
        client,
        `SELECT c.id, c.email, c.data FROM contacts c WHERE c.project_id = $1::uuid AND c.subscribed
           AND (c.snoozed_until IS NULL OR c.snoozed_until <= now()) AND c.id > '80000000-0000-0000-0000-000000000000'::uuid
           ORDER BY c.id LIMIT 5000`,
        [target.projectId],
      ),
    ].join("\n");
    return { rows, plans };
  } finally {
    await client.end();
  }
}
