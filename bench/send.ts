// Sending benchmarks (issue: delivery): POST /v1/send through the gateway, and the
// send queue emptied into a local SMTP sink, DKIM-signed, for 50,000 emails.
import { createClient } from "@connectrpc/connect";
import { createRpcTransport } from "@herald/platform";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import type { TestDnsServer, TestSmtpSink } from "@herald/testing";
import type autocannon from "autocannon";

export interface SendBenchTarget {
  gatewayUrl: string;
  deliveryUrl: string;
  dns: TestDnsServer;
  sink: TestSmtpSink;
  /** A new project through the REST API. */
  project(): Promise<{ id: string; secretKey: string }>;
  load(options: autocannon.Options): Promise<autocannon.Result>;
}

/** The ~3 KB HTML body of the sending benchmarks: a receipt with one tracked link. */
export const receiptHtml = `<html><body><h1>Your receipt</h1>${"<p>Thank you for your order. Here is what you bought and what it cost.</p>".repeat(40)}<p><a href="https://example.com/orders">Your orders</a></p></body></html>`;

/** A domain of the project, verified through the bench's DNS server. */
export async function verifiedDomain(target: SendBenchTarget, secretKey: string): Promise<string> {
  const domain = `bench-${Date.now()}.herald.test`;
  const headers = { "content-type": "application/json", authorization: `Bearer ${secretKey}` };
  const created = (await (
    await fetch(`${target.gatewayUrl}/domains`, { method: "POST", headers, body: JSON.stringify({ domain }) })
  ).json()) as {
    id: string;
    records: Array<{ purpose: string; name: string; value: string }>;
  };
  const dkim = created.records.find((record) => record.purpose === "dkim");
  if (!dkim) throw new Error("the bench domain has no DKIM record");
  target.dns.setTxt(dkim.name, [dkim.value]);
  const verified = (await (await fetch(`${target.gatewayUrl}/domains/${created.id}/verify`, { headers })).json()) as { verified: boolean };
  if (!verified.verified) throw new Error("the bench domain did not verify");
  return domain;
}

/** Waits until `count` messages to `@<domain>` recipients arrived (or the time is up); answers how many did. */
async function waitForMessages(sink: TestSmtpSink, domain: string, count: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  const arrived = () => sink.messages().filter((message) => message.to[0]?.endsWith(`@${domain}`)).length;
  while (arrived() < count && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
  return arrived();
}

/** Emails a measurement left in the queue: to recipients at `domain`. */
export interface Backlog {
  domain: string;
  count: number;
}

/**
 * POST /v1/send, a ~3 KB HTML email, a new recipient every 10 requests; the dispatcher sends meanwhile.
 * Answers the row and the emails it got accepted, warm-up included, which may still wait to be sent.
 */
export async function sendApi(target: SendBenchTarget, connections: number): Promise<{ row: string; backlog: Backlog }> {
  const { secretKey } = await target.project();
  const domain = await verifiedDomain(target, secretKey);
  let sent = 0;
  let accepted = 0;
  const result = await target.load({
    url: `${target.gatewayUrl}/v1/send`,
    connections,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${secretKey}` },
        setupRequest: (request) => {
          const recipient = Math.floor(sent++ / 10);
          return {
            ...request,
            body: JSON.stringify({
              to: `r${recipient}@send.bench`,
              from: `receipts@${domain}`,
              subject: "Your receipt {{order}}",
              body: receiptHtml,
              data: { order: { value: `A-${sent}`, persistent: false }, plan: "pro" },
            }),
          };
        },
        onResponse: (status) => {
          if (status >= 200 && status < 300) accepted++;
        },
      },
    ],
  });
  return {
    row: `| POST /v1/send (gateway → delivery → contacts), new recipient every 10 requests | ${connections} connections | ${Math.round(result.requests.average)} req/s | p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms | ${result["2xx"]} ok, ${result.non2xx} non-2xx, ${result.errors} errors |`,
    backlog: { domain: "send.bench", count: accepted },
  };
}

/**
 * 50,000 emails enqueued through EnqueueEmails in batches of 100 (what campaigns do) as fast
 * as the queue takes them, sent meanwhile by the one delivery process into the sink: emails/s
 * from the first enqueue to the last arrival. An earlier measurement's backlog is sent first, unmeasured.
 */
export async function delivered(target: SendBenchTarget, count: number, backlog?: Backlog): Promise<string> {
  if (backlog) await waitForMessages(target.sink, backlog.domain, backlog.count, 10 * 60_000);
  const project = await target.project();
  const domain = await verifiedDomain(target, project.secretKey);
  const emails = createClient(EmailsService, createRpcTransport({ baseUrl: target.deliveryUrl, connections: 4, timeoutMs: 60_000 }));
  const started = performance.now();
  const batch = 100;
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let first = next; first < count; first = next) {
        next += batch;
        await emails.enqueueEmails({
          emails: Array.from({ length: Math.min(batch, count - first) }, (_, offset) => ({
            projectId: project.id,
            idempotencyKey: `bench-${first + offset}`,
            to: { email: `d${first + offset}@delivered.bench`, name: "" },
            from: { email: `news@${domain}`, name: "News" },
            subject: `Email ${first + offset}`,
            html: receiptHtml,
          })),
        });
      }
    }),
  );
  const enqueued = (performance.now() - started) / 1000;
  const arrived = await waitForMessages(target.sink, "delivered.bench", count, 30 * 60_000);
  const seconds = (performance.now() - started) / 1000;
  return `| ${count.toLocaleString("en")} emails, EnqueueEmails → dispatcher → SMTP sink, DKIM-signed | batches of 100, 4 at once; one delivery process | ${Math.round(arrived / seconds)} emails/s delivered | enqueued in ${enqueued.toFixed(1)} s (${Math.round(count / enqueued)}/s), last arrival at ${seconds.toFixed(1)} s | ${arrived} of ${count} arrived |`;
}

/** POST /v1/verify: each request looks up its domain's MX through the bench's DNS server and asks for suppressions. */
export async function verifyApi(target: SendBenchTarget, connections: number): Promise<string> {
  const { secretKey } = await target.project();
  const domains = Array.from({ length: 100 }, (_, index) => `verify-${index}.bench.test`);
  for (const domain of domains) target.dns.setMx(domain, [{ priority: 10, exchange: `mx.${domain}` }]);
  let sent = 0;
  const result = await target.load({
    url: `${target.gatewayUrl}/v1/verify`,
    connections,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${secretKey}` },
        setupRequest: (request) => {
          const index = sent++;
          return { ...request, body: JSON.stringify({ email: `person${index}@${domains[index % domains.length]}` }) };
        },
      },
    ],
  });
  return `| POST /v1/verify (gateway → delivery → DNS and suppressions), 100 domains | ${connections} connections | ${Math.round(result.requests.average)} req/s | p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms | ${result["2xx"]} ok, ${result.non2xx} non-2xx, ${result.errors} errors |`;
}
