// Scale benchmark (issue 32, data lifecycle): grows one database to each size of
// BENCH_SCALE_SIZES contacts (default 1,000,000 then 10,000,000), with five tracked
// events per contact, across 100 projects of which one holds half of every contact, and
// an email with two activity rows for every tenth contact. At each size it measures the
// paths that grow with the data, on the large project, and the disk each table takes; at the
// largest size, last, it drops a month of events as the retention pass does.
import { createClient } from "@connectrpc/connect";
import { partitionName } from "@herald/db";
import { createRpcTransport } from "@herald/platform";
import { SegmentsService } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import type autocannon from "autocannon";
import pg from "pg";
import { bulkLoad, withoutChangeEvents } from "./segments.ts";

export interface ScaleProject {
  id: string;
  publicKey: string;
  secretKey: string;
}

export interface ScaleBenchTarget {
  gatewayUrl: string;
  contactsUrl: string;
  databaseUrl: string;
  /** The project that holds half of the contacts: every measure runs on it. */
  large: ScaleProject;
  load: (options: autocannon.Options) => Promise<autocannon.Result>;
}

/** The 99 other projects: ids only, with no account behind them; their rows are what the large project's queries step over. */
const otherProjects = Array.from({ length: 99 }, (_, index) => `00000000-0000-4000-8000-${String(index + 1).padStart(12, "0")}`);
const eventsPerContact = 5;

/** A seeded contact's number, from its address `user<n>@seed.test`; null for the contacts the track measure created. */
const seededNumber = "CASE WHEN email LIKE 'user%@seed.test' THEN substring(email FROM 5 FOR length(email) - 14)::bigint END";

const seconds = (started: number) => (performance.now() - started) / 1000;
const millions = (count: number) =>
  count >= 1_000_000 ? `${(count / 1_000_000).toLocaleString("en", { maximumFractionDigits: 1 })}M` : count.toLocaleString("en");

function schemaClient(databaseUrl: string, schema: string): pg.Client {
  const url = new URL(databaseUrl);
  url.searchParams.delete("schema");
  return new pg.Client({ connectionString: url.toString(), options: `-c search_path=${schema}` });
}

/**
 * Contacts `from + 1` to `to` (global numbers): the even ones in the large project, the odd ones spread over the others;
 * five events each over the last 180 days, and for every tenth an email sent and opened, with its two activity rows.
 */
async function grow(contacts: pg.Client, delivery: pg.Client, largeId: string, from: number, to: number): Promise<string> {
  const started = performance.now();
  const setup = "SET synchronous_commit = off; SET maintenance_work_mem = '1GB'; SET max_parallel_maintenance_workers = 2";
  await contacts.query(setup);
  await delivery.query(setup);
  await withoutChangeEvents(contacts, () =>
    bulkLoad(contacts, "contacts", () =>
      contacts.query(
        `INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at)
         SELECT gen_random_uuid(), CASE WHEN i % 2 = 0 THEN $1::uuid ELSE ($2::uuid[])[1 + (i / 2) % 99] END,
           'user' || i || '@seed.test', i % 10 <> 1,
           jsonb_build_object(
             'plan', (ARRAY['free','starter','pro','enterprise'])[1 + i % 4],
             'country', (ARRAY['US','DE','FR','GB','ES','IT','NL','SE','PL','BR','IN','JP','CA','AU','MX','AR','ZA','NG','KR','SG'])[1 + (i / 2) % 20],
             'score', (i::bigint * 7919) % 1000,
             'first name', 'Name' || (i % 5000)
           ),
           now() - (i % 365) * interval '1 day', now()
         FROM generate_series($3::bigint + 1, $4::bigint) AS i`,
        [largeId, otherProjects, from, to],
      ),
    ),
  );
  const contactsSeconds = seconds(started);
  await bulkLoad(contacts, "events", () =>
    contacts.query(
      `INSERT INTO events (id, project_id, contact_id, name, data, created_at)
       SELECT gen_random_uuid(), c.project_id, c.id, 'event.' || ((k * 13 + n) % 20), jsonb_build_object('k', k),
              now() - ((n + k * 37) % 180) * interval '1 day' - (n % 86400) * interval '1 second'
       FROM (SELECT id, project_id, ${seededNumber} AS n FROM contacts) c,
            generate_series(1, $3::int) AS k
       WHERE c.n > $1::bigint AND c.n <= $2::bigint`,
      [from, to, eventsPerContact],
    ),
  );
  const eventsSeconds = seconds(started) - contactsSeconds;
  // Delivery's rows name contacts by id across schemas, as delivery's own writes do.
  await bulkLoad(delivery, "emails", () =>
    delivery.query(
      `INSERT INTO emails (id, project_id, contact_id, to_email, from_email, subject, html, category, status, attempts,
                           next_attempt_at, message_id, sent_at, opened_at, created_at, updated_at)
       SELECT gen_random_uuid(), c.project_id, c.id, c.email, 'news@seed.test', 'Issue ' || (c.n % 52),
              repeat('<p>Hello, this is a seeded newsletter paragraph.</p>', 30), 'CAMPAIGN', 'OPENED', 1,
              c.sent_at, '<' || c.n || '@seed.test>', c.sent_at, c.sent_at + interval '1 hour', c.sent_at, c.sent_at
       FROM (SELECT id, project_id, email, n, now() - (n % 90) * interval '1 day' AS sent_at
             FROM (SELECT id, project_id, email, ${seededNumber} AS n FROM contacts.contacts) numbered) c
       WHERE c.n > $1::bigint AND c.n <= $2::bigint AND c.n % 10 = 0`,
      [from, to],
    ),
  );
  await bulkLoad(delivery, "email_activity", () =>
    delivery.query(
      `INSERT INTO email_activity (id, project_id, email_id, contact_id, type, recipient, category, occurred_at)
       SELECT gen_random_uuid(), e.project_id, e.id, e.contact_id, kind.type, e.to_email, 'CAMPAIGN',
              e.sent_at + kind.after
       FROM emails e, (VALUES ('email.sent', interval '0'), ('email.open', interval '1 hour')) AS kind (type, after)
       WHERE (CASE WHEN e.message_id LIKE '<%@seed.test>' THEN substring(e.message_id FROM 2 FOR length(e.message_id) - 12)::bigint END)
             BETWEEN $1::bigint + 1 AND $2::bigint`,
      [from, to],
    ),
  );
  // VACUUM as well as ANALYZE, as autovacuum does within minutes of a bulk load (its insert threshold): until it has,
  // no page of the load is marked all-visible, and every index-only scan reads the rows' pages too (a segment's event
  // filter then took 2.47 s instead of ~1.6 s, docs/benchmarks.md).
  for (const table of ["contacts", "events"]) await contacts.query(`VACUUM (ANALYZE) ${table}`);
  for (const table of ["emails", "email_activity"]) await delivery.query(`VACUUM (ANALYZE) ${table}`);
  await contacts.query("RESET synchronous_commit; RESET maintenance_work_mem");
  await delivery.query("RESET synchronous_commit; RESET maintenance_work_mem");
  const added = to - from;
  return `| seed ${millions(added)} contacts, ${millions(added * eventsPerContact)} events, ${millions(added / 10)} emails, ${millions(added / 5)} activity rows (to ${millions(to)} contacts) | INSERT … SELECT each, keys and indexes built after | ${seconds(started).toFixed(0)} s (contacts ${contactsSeconds.toFixed(0)} s, events ${eventsSeconds.toFixed(0)} s, delivery the rest) | |`;
}

/** Bytes of a table with its indexes and TOAST, the partitions of a partitioned table included. */
async function tableBytes(client: pg.Client, table: string): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>(
    // pg_partition_tree lists nothing for a table that is not partitioned.
    `SELECT coalesce((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree($1::regclass)), pg_total_relation_size($1::regclass)) AS bytes`,
    [table],
  );
  return Number(rows[0]?.bytes ?? 0);
}

async function disk(contacts: pg.Client, delivery: pg.Client, size: number): Promise<string[]> {
  const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20).toLocaleString("en")} MiB`;
  const contactBytes = await tableBytes(contacts, "contacts");
  const eventBytes = await tableBytes(contacts, "events");
  const emailBytes = (await tableBytes(delivery, "emails")) + (await tableBytes(delivery, "email_activity"));
  return [
    `| disk at ${millions(size)} contacts: contacts | table, TOAST and indexes (B-tree, trigram on email, GIN on data) | ${mib(contactBytes)} | ${mib(contactBytes / (size / 1_000_000))} per million contacts |`,
    `| disk at ${millions(size)} contacts: events | ${millions(size * eventsPerContact)} rows, with indexes | ${mib(eventBytes)} | ${mib(eventBytes / ((size * eventsPerContact) / 1_000_000))} per million events |`,
    `| disk at ${millions(size)} contacts: emails and activity | ${millions(size / 10)} emails of ~1.5 KB HTML, ${millions(size / 5)} activity rows | ${mib(emailBytes)} | ${mib(emailBytes / (size / 10 / 1_000_000))} per million emails (with their two activity rows) |`,
  ];
}

/** POST /v1/track into the large project for BENCH_SECONDS: a new contact every 10 requests, the rest events of known ones. */
async function trackRate(target: ScaleBenchTarget, label: string): Promise<{ rate: number; row: string }> {
  let sent = 0;
  const run = `${label.replace(/\W+/g, "-")}-${Date.now()}`;
  const result = await target.load({
    url: `${target.gatewayUrl}/v1/track`,
    connections: 50,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${target.large.publicKey}` },
        setupRequest: (request) => {
          const contact = Math.floor(sent++ / 10);
          return { ...request, body: JSON.stringify({ email: `t${contact}-${run}@bench.test`, event: "page.viewed", data: { n: sent } }) };
        },
      },
    ],
  });
  const rate = Math.round(result.requests.average);
  return {
    rate,
    row: `| POST /v1/track, ${label} | 50 connections | ${rate} req/s | p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms | ${result["2xx"]} ok, ${result.non2xx} non-2xx |`,
  };
}

async function rest<T>(target: ScaleBenchTarget, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${target.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${target.large.secretKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10 * 60_000),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** BENCH_SECONDS of GET requests with the secret key over 10 connections, cycling through `paths`. */
async function reads(target: ScaleBenchTarget, name: string, paths: string[], size: number): Promise<string> {
  let next = 0;
  const result = await target.load({
    url: target.gatewayUrl,
    connections: 10,
    requests: [
      {
        method: "GET",
        headers: { authorization: `Bearer ${target.large.secretKey}` },
        setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] ?? "/" }),
      },
    ],
  });
  const met = result.latency.p99 < 200 && result.non2xx === 0 ? "met" : "not met";
  return `| ${name} at ${millions(size)} | 10 connections, ${paths.length} distinct requests | ${Math.round(result.requests.average)} req/s | p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms | ${result["2xx"]} ok, ${result.non2xx} non-2xx; goal p99 under 200 ms: ${met} |`;
}

/** The cursors of the first `pages` pages of a cursor list, so that deep pages are requested too. */
async function cursorPaths(target: ScaleBenchTarget, path: string, pages: number): Promise<string[]> {
  const paths = [path];
  let cursor: string | undefined;
  for (let page = 1; page < pages; page++) {
    const body = await rest<{ cursor?: string; hasMore?: boolean }>(
      target,
      "GET",
      cursor ? `${path}&cursor=${encodeURIComponent(cursor)}` : path,
    );
    if (!body.hasMore || !body.cursor) break;
    cursor = body.cursor;
    paths.push(`${path}&cursor=${encodeURIComponent(cursor)}`);
  }
  return paths;
}

async function measure(target: ScaleBenchTarget, size: number, smallRate: number): Promise<string[]> {
  const rows: string[] = [];
  const track = await trackRate(target, `${millions(size)} contacts in the database (${millions(size / 2)} in this project)`);
  const ratio = smallRate > 0 ? track.rate / smallRate : 0;
  rows.push(
    `${track.row.slice(0, -2)}; ${(ratio * 100).toFixed(0)} % of the small database's rate (goal within 15 %: ${ratio >= 0.85 ? "met" : "not met"}) |`,
  );

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
  const segment = await rest<{ id: string }>(target, "POST", "/segments", { name: `Scale ${size}`, condition: threeFilters });
  const timings: number[] = [];
  let members = 0;
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    members = (await rest<{ memberCount: number }>(target, "POST", `/segments/${segment.id}/refresh`)).memberCount;
    timings.push(seconds(started));
  }
  timings.sort((a, b) => a - b);
  rows.push(
    `| POST /segments/:id/refresh, 3 filters (equals, gt, triggeredWithin), at ${millions(size)} | 3 runs | median ${(timings[1] ?? 0).toFixed(2)} s, best ${(timings[0] ?? 0).toFixed(2)} s | ${members.toLocaleString("en")} members of ${millions(size / 2)}; goal under 2 s: ${(timings[1] ?? 99) < 2 ? "met" : "not met"} |`,
  );

  rows.push(await reads(target, "GET /contacts, first page", ["/contacts?limit=20"], size));
  rows.push(await reads(target, "GET /contacts, cursor pages 1 to 50", await cursorPaths(target, "/contacts?limit=20", 50), size));
  const searches = Array.from(
    { length: 20 },
    (_, index) => `/contacts?limit=20&search=${encodeURIComponent(`user${(index + 1) * 4_321 * 2}@`)}`,
  );
  rows.push(await reads(target, "GET /contacts?search= (an address's start)", searches, size));
  rows.push(await reads(target, "GET /events, first page", ["/events"], size));
  rows.push(await reads(target, "GET /activity, first page", ["/activity"], size));

  const segments = createClient(SegmentsService, createRpcTransport({ baseUrl: target.contactsUrl, timeoutMs: 10 * 60_000 }));
  const started = performance.now();
  let streamed = 0;
  for await (const batch of segments.streamAudience({
    projectId: target.large.id,
    audience: { kind: { case: "all", value: {} } },
    batchSize: 5_000,
  })) {
    streamed += batch.contacts.length;
  }
  const rate = Math.round(streamed / seconds(started));
  rows.push(
    `| StreamAudience (gRPC), ALL of the large project, batches of 5,000, at ${millions(size)} | one stream | ${rate.toLocaleString("en")} contacts/s | ${streamed.toLocaleString("en")} subscribed contacts; goal at least 50,000/s: ${rate >= 50_000 ? "met" : "not met"} |`,
  );
  return rows;
}

/**
 * A month of expired events dropped as the retention pass drops it: one DROP TABLE of the month's partition. The seed
 * writes every event into the default partition (months are created from the current one forward), so the oldest
 * seeded month is first moved into a partition of its own, with the parent's indexes and keys, as a deployment that
 * had partitions all along holds it; only the DROP is timed.
 */
async function dropMonth(contacts: pg.Client, size: number): Promise<string> {
  const start = new Date();
  const from = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() - 5, 1));
  const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
  const name = partitionName("events", from);
  await contacts.query(`CREATE TABLE ${name} (LIKE events INCLUDING DEFAULTS)`);
  const moved = await contacts.query(
    `WITH moved AS (DELETE FROM events_default WHERE created_at >= $1 AND created_at < $2 RETURNING *) INSERT INTO ${name} SELECT * FROM moved`,
    [from, to],
  );
  await contacts.query(`ALTER TABLE events ATTACH PARTITION ${name} FOR VALUES FROM ('${from.toISOString()}') TO ('${to.toISOString()}')`);
  const bytes = Number(
    (await contacts.query<{ bytes: string }>("SELECT pg_total_relation_size($1::regclass) AS bytes", [name])).rows[0]?.bytes,
  );
  const started = performance.now();
  await contacts.query(`DROP TABLE ${name}`);
  const ms = performance.now() - started;
  const rows = moved.rowCount ?? 0;
  return `| a month of expired events dropped at ${millions(size)} contacts | DROP TABLE of the month's partition, as the retention pass does | ${ms.toFixed(0)} ms | ${millions(rows)} events, ${Math.round(bytes / 2 ** 20).toLocaleString("en")} MiB with indexes; goal under 1 s: ${ms < 1_000 ? "met" : "not met"} |`;
}

export async function scaleBenchmarks(target: ScaleBenchTarget, sizes: number[]): Promise<string[]> {
  const contacts = schemaClient(target.databaseUrl, "contacts");
  const delivery = schemaClient(target.databaseUrl, "delivery");
  await Promise.all([contacts.connect(), delivery.connect()]);
  try {
    const small = await trackRate(target, "small database (empty project)");
    const rows = [small.row];
    let seeded = 0;
    for (const size of sizes) {
      const grown = [await grow(contacts, delivery, target.large.id, seeded, size)];
      seeded = size;
      grown.push(...(await measure(target, size, small.rate)), ...(await disk(contacts, delivery, size)));
      // Last, at the largest size only: it takes a month of events away from the measures of a larger size.
      if (size === sizes.at(-1)) grown.push(await dropMonth(contacts, size));
      // Progress on stderr: the run takes most of an hour.
      console.error(grown.join("\n"));
      rows.push(...grown);
    }
    return rows;
  } finally {
    await Promise.all([contacts.end(), delivery.end()]);
  }
}
