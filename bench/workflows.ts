// Workflow benchmarks (issue 22): timers of 10,000 executions that each wait on a one-minute
// DELAY and then send an email, and /v1/track with and without 20 enabled workflows listening.
// The services read the bench's environment: DELAY_TIME_SCALE=0.1 makes the minute six seconds,
// STEP_CONCURRENCY and STEP_POLL_INTERVAL_MS tune the step runner.
import pg from "pg";
import { type SendBenchTarget, verifiedDomain } from "./send.ts";

export interface WorkflowBenchTarget extends SendBenchTarget {
  databaseUrl: string;
  project(): Promise<{ id: string; secretKey: string; publicKey: string }>;
}

async function rest<T>(gatewayUrl: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${gatewayUrl}${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** An enabled workflow of the given steps in a chain, triggered by eventName. */
async function chain(gatewayUrl: string, key: string, eventName: string, steps: Array<{ type: string; config: Record<string, unknown> }>) {
  const workflow = await rest<{ id: string }>(gatewayUrl, key, "POST", "/workflows", {
    name: `bench ${eventName}`,
    eventName,
    allowReentry: true,
  });
  let previous: string | undefined;
  for (const [index, step] of steps.entries()) {
    const created = await rest<{ id: string }>(gatewayUrl, key, "POST", `/workflows/${workflow.id}/steps`, {
      ...step,
      name: `step ${index}`,
    });
    if (previous)
      await rest(gatewayUrl, key, "POST", `/workflows/${workflow.id}/transitions`, { fromStepId: previous, toStepId: created.id });
    previous = created.id;
  }
  await rest(gatewayUrl, key, "PATCH", `/workflows/${workflow.id}`, { enabled: true });
  return workflow.id;
}

/** Sends `count` tracked events, `concurrency` at a time, each for a new contact. */
async function trackMany(
  target: WorkflowBenchTarget,
  publicKey: string,
  event: string,
  count: number,
  concurrency: number,
  domain: string,
) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        await rest(target.gatewayUrl, publicKey, "POST", "/v1/track", { email: `w${index}@${domain}`, event });
      }
    }),
  );
}

const quantile = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))] ?? 0;

/**
 * `executions` executions: a one-minute DELAY (times DELAY_TIME_SCALE, 1 unless the bench's
 * environment sets it), then an email. Reports how late the timers fired (the DELAY run's
 * second pass recorded, against its due time) and the steps per second from the first timer
 * due to the last email enqueued (each execution's timer pass and its SEND_EMAIL: two steps).
 */
export async function delayedEmails(target: WorkflowBenchTarget, executions: number): Promise<string> {
  const { id: projectId, secretKey, publicKey } = await target.project();
  const domain = await verifiedDomain(target, secretKey);
  const event = "bench.delayed";
  await chain(target.gatewayUrl, secretKey, event, [
    { type: "DELAY", config: { amount: 1, unit: "minutes" } },
    { type: "SEND_EMAIL", config: { from: `bench@${domain}`, subject: "After a minute", body: "<p>Hello {{ email }}</p>" } },
  ]);
  const tracking = performance.now();
  await trackMany(target, publicKey, event, executions, 50, domain);
  const trackedSeconds = (performance.now() - tracking) / 1000;
  const client = new pg.Client({ connectionString: target.databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + Number(process.env.BENCH_WORKFLOW_TIMEOUT_SECONDS ?? 900) * 1000;
    let finished = 0;
    while (finished < executions && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const { rows } = await client.query<{ finished: string }>(
        "SELECT count(*) AS finished FROM automation.workflow_executions WHERE project_id = $1 AND status IN ('COMPLETED', 'FAILED')",
        [projectId],
      );
      finished = Number(rows[0]?.finished ?? 0);
    }
    const outcomes = await client.query<{ status: string; n: string }>(
      "SELECT status, count(*) AS n FROM automation.workflow_executions WHERE project_id = $1 GROUP BY status ORDER BY status",
      [projectId],
    );
    const lateness = await client.query<{ late_ms: number }>(
      `SELECT extract(epoch FROM (finished_at - due_at)) * 1000 AS late_ms FROM automation.workflow_step_runs
       WHERE project_id = $1 AND step_type = 'DELAY' AND status = 'COMPLETED'`,
      [projectId],
    );
    const span = await client.query<{ seconds: number }>(
      `SELECT extract(epoch FROM (max(finished_at) FILTER (WHERE step_type = 'SEND_EMAIL') - min(due_at) FILTER (WHERE step_type = 'DELAY'))) AS seconds
       FROM automation.workflow_step_runs WHERE project_id = $1`,
      [projectId],
    );
    const late = lateness.rows.map((row) => Number(row.late_ms)).sort((a, b) => a - b);
    const seconds = Number(span.rows[0]?.seconds ?? 0);
    const statuses = outcomes.rows.map((row) => `${row.n} ${row.status}`).join(", ");
    return `| ${executions} executions: DELAY 1 minute, then SEND_EMAIL | ${executions} tracked events, 50 at a time, in ${trackedSeconds.toFixed(1)} s | ${seconds > 0 ? Math.round((2 * late.length) / seconds) : 0} steps/s from the first timer to the last email | timers late p50 ${quantile(late, 0.5).toFixed(0)} ms, p99 ${quantile(late, 0.99).toFixed(0)} ms, max ${(late.at(-1) ?? 0).toFixed(0)} ms | ${statuses}; ${late.length} timers fired |`;
  } finally {
    await client.end();
  }
}

/** The tracked event that starts one of listeningWorkflows' workflows; the others listen for events the bench never sends. */
export const benchTriggerEvent = "signup.completed";

/**
 * 20 enabled workflows, as a project that automates its onboarding has them: each triggered by
 * an event of its own (the first by benchTriggerEvent), each waiting a day for a purchase
 * (WAIT_FOR_EVENT) and then exiting by either branch. Every tracked event goes through the
 * engine's trigger check; the page views match nothing, and each benchTriggerEvent starts one execution.
 */
export async function listeningWorkflows(gatewayUrl: string, secretKey: string): Promise<void> {
  for (let index = 0; index < 20; index++) {
    const eventName = index === 0 ? benchTriggerEvent : `bench.listening.${index}`;
    const workflow = await rest<{ id: string }>(gatewayUrl, secretKey, "POST", "/workflows", { name: `listening ${index}`, eventName });
    const step = (type: string, name: string, config: Record<string, unknown>) =>
      rest<{ id: string }>(gatewayUrl, secretKey, "POST", `/workflows/${workflow.id}/steps`, { type, name, config });
    const wait = await step("WAIT_FOR_EVENT", "wait for a purchase", { eventName: "purchase.completed", timeout: 86_400 });
    const bought = await step("EXIT", "bought", { reason: "bought" });
    const idle = await step("EXIT", "idle", { reason: "idle" });
    for (const [toStepId, branch] of [
      [bought.id, "event"],
      [idle.id, "timeout"],
    ] as const)
      await rest(gatewayUrl, secretKey, "POST", `/workflows/${workflow.id}/transitions`, { fromStepId: wait.id, toStepId, branch });
    await rest(gatewayUrl, secretKey, "PATCH", `/workflows/${workflow.id}`, { enabled: true });
  }
}
