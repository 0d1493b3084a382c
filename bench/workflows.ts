// Workflow benchmarks (issue 22): timers of 10,000 executions that each wait on a one-minute
// DELAY and then send an email, and /v1/track with and without 20 enabled workflows listening.
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

/** 10,000 executions: a one-minute DELAY, then an email. How late the timers fire, and the steps per second. */
export async function delayedEmails(target: WorkflowBenchTarget, executions: number): Promise<string> {
  const { id: projectId, secretKey, publicKey } = await target.project();
  const domain = await verifiedDomain(target, secretKey);
  const event = "bench.delayed";
  await chain(target.gatewayUrl, secretKey, event, [
    { type: "DELAY", config: { amount: 1, unit: "minutes" } },
    { type: "SEND_EMAIL", config: { from: `bench@${domain}`, subject: "After a minute", body: "<p>Hello {{ email }}</p>" } },
  ]);
  await trackMany(target, publicKey, event, executions, 50, domain);
  const client = new pg.Client({ connectionString: target.databaseUrl });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ finished: string }>(
        "SELECT count(*) AS finished FROM automation.workflow_executions WHERE project_id = $1 AND status IN ('COMPLETED', 'FAILED')",
        [projectId],
      );
      if (Number(rows[0]?.finished ?? 0) >= executions) break;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    const lateness = await client.query<{ late_ms: number }>(
      `SELECT extract(epoch FROM (finished_at - due_at)) * 1000 AS late_ms FROM automation.workflow_step_runs
       WHERE project_id = $1 AND step_type = 'DELAY' AND finished_at IS NOT NULL`,
      [projectId],
    );
    const span = await client.query<{ steps: string; seconds: number }>(
      `SELECT count(*) AS steps, extract(epoch FROM (max(finished_at) - min(created_at))) AS seconds FROM automation.workflow_step_runs
       WHERE project_id = $1 AND finished_at IS NOT NULL`,
      [projectId],
    );
    const late = lateness.rows.map((row) => Number(row.late_ms)).sort((a, b) => a - b);
    const steps = Number(span.rows[0]?.steps ?? 0);
    // The steps of the whole run, the minute of waiting excluded.
    const busySeconds = Math.max(1, Number(span.rows[0]?.seconds ?? 0) - 60);
    return `| ${executions} executions: DELAY 1 minute, then SEND_EMAIL | ${executions} tracked events, 50 at a time | ${Math.round(steps / busySeconds)} steps/s outside the wait | timers late p50 ${quantile(late, 0.5).toFixed(0)} ms, p99 ${quantile(late, 0.99).toFixed(0)} ms | ${steps} step runs, ${late.length} timers |`;
  } finally {
    await client.end();
  }
}

/** Creates 20 enabled workflows listening for the event /v1/track sends (each an EXIT). */
export async function listeningWorkflows(gatewayUrl: string, secretKey: string, event: string): Promise<void> {
  for (let index = 0; index < 20; index++) await chain(gatewayUrl, secretKey, event, [{ type: "EXIT", config: {} }]);
}
