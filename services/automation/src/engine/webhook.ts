import { createHmac } from "node:crypto";
import { createOutboundCaller, OutboundRefused } from "@herald/platform";
import { describeProblem } from "@herald/rendering";
import type { RenderPool } from "@herald/rendering/pool";
import type { JsonObject, JsonValue, WebhookConfig } from "../domain/step-config.js";
import type { StepExecutor } from "./step-outcome.js";
import type { WebhookSecrets } from "./webhook-secrets.js";

/** Attempts of one webhook delivery (the first included) before the execution fails. */
const maxWebhookAttempts = 4;
const maxRedirects = 5;
/** What a step's output records of a response body: the rest of the body is never read. */
const recordedBodyBytes = 2_048;

/** HMAC-SHA256 over "<timestamp>.<body>", as X-Herald-Signature carries it: `t=<timestamp>,v1=<hex>`. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** The strings of a JSON value, depth first: what withStrings puts back in the same order. */
function stringsOf(value: JsonValue, into: string[] = []): string[] {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into);
  else if (value && typeof value === "object") for (const item of Object.values(value)) stringsOf(item, into);
  return into;
}

/** The value with each of its strings, depth first, replaced by the next of `strings`. */
function withStrings(value: JsonValue, strings: Iterator<string>): JsonValue {
  if (typeof value === "string") return strings.next().value ?? "";
  if (Array.isArray(value)) return value.map((item) => withStrings(item, strings));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withStrings(item, strings)]));
  return value;
}

/**
 * WEBHOOK steps: a rendered request, signed with the project's secret, through agents that
 * refuse private, loopback, link-local and metadata addresses once DNS has answered (and so
 * on every redirect, each of which is a new request through them). 5xx answers and network
 * errors, the deadline's included, are retried with backoff by the runner; Idempotency-Key
 * and X-Herald-Delivery (the step run's id) stay the same on every attempt, so that
 * receivers can deduplicate. The whole call, redirects and bodies included, has one deadline.
 */
export function createWebhookExecutor(deps: {
  secrets: WebhookSecrets;
  dnsServers: string[];
  allowedAddresses: string[];
  /** WEBHOOK_TIMEOUT_MS: the deadline of one attempt, from its first connection to its last byte. */
  timeoutMs: number;
  /** Where the URL, headers and body render their Liquid (createRenderPool), off the event loop that fires the timers. */
  renders: RenderPool;
}): StepExecutor {
  const caller = createOutboundCaller({ dnsServers: deps.dnsServers, allowedAddresses: deps.allowedAddresses });
  const send = (url: URL, method: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal) =>
    caller.send(url, { method, headers, body, signal, maxBodyBytes: recordedBodyBytes });

  return async ({ run, execution, step, signal: claim }) => {
    const config = step.config as unknown as WebhookConfig;
    const variables = {
      data: {
        trigger: { name: execution.triggerEvent, data: execution.triggerData },
        context: execution.context,
        contactId: execution.contactId,
      },
    };
    // Every text of the step in one task of the render threads: the URL, the headers' values, then the body's strings.
    const headerNames = Object.keys(config.headers);
    const texts = [config.url, ...Object.values(config.headers), ...(config.body === undefined ? [] : stringsOf(config.body))];
    const rendered: string[] = [];
    for (const result of await deps.renders.renderTexts(texts, variables)) {
      if (typeof result !== "string") return { kind: "fail", error: `The webhook does not render: ${describeProblem(result.problem)}` };
      rendered.push(result);
    }
    const [renderedUrl = "", ...rest] = rendered;
    const renderedHeaders = Object.fromEntries(headerNames.map((name, index) => [name, rest[index] ?? ""]));
    let url: URL;
    try {
      url = new URL(renderedUrl);
    } catch {
      return { kind: "fail", error: "The rendered webhook URL is not a URL" };
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return { kind: "fail", error: "The webhook URL must be http:// or https://" };
    const payload =
      config.body === undefined
        ? {
            workflowId: execution.workflowId,
            executionId: execution.id,
            stepId: step.id,
            contactId: execution.contactId,
            trigger: { name: execution.triggerEvent, data: execution.triggerData },
            context: execution.context,
          }
        : withStrings(config.body, rest.slice(headerNames.length).values());
    const body = config.method === "GET" ? undefined : JSON.stringify(payload);
    const { secret } = await deps.secrets.get(execution.projectId);
    const timestamp = Math.floor(Date.now() / 1000);
    // Who calls and which delivery this is: the same on every attempt and every hop, so that a receiver can deduplicate.
    const identity = { "user-agent": "Herald-Webhooks/1", "x-herald-delivery": run.id, "idempotency-key": run.id };
    const headers: Record<string, string> = {
      ...renderedHeaders,
      "content-type": "application/json",
      ...identity,
      "x-herald-timestamp": String(timestamp),
      "x-herald-signature": webhookSignature(secret, timestamp, body ?? ""),
    };
    const request: JsonObject = {
      method: config.method,
      url: url.toString(),
      headers: { ...headers },
      ...(body === undefined ? {} : { body: body.slice(0, recordedBodyBytes) }),
    };
    // One deadline for the whole call: connections, redirects, heads and bodies.
    const deadline = AbortSignal.timeout(deps.timeoutMs);
    const signal = AbortSignal.any([deadline, claim]);
    try {
      let target = url;
      let response = await send(target, config.method, headers, body, signal);
      for (let hops = 0; response.status >= 300 && response.status < 400 && response.location && hops < maxRedirects; hops++) {
        target = new URL(response.location, target);
        // A redirect is fetched as a GET without the body (as browsers do for 301–303); the agents check its address again.
        // Another origin gets neither the step's own headers (credentials, often) nor the signature, which it could replay.
        response = await send(target, "GET", target.origin === url.origin ? headers : identity, undefined, signal);
      }
      const output: JsonObject = { request, response: { status: response.status, body: response.body, url: target.toString() } };
      if (response.status >= 500) {
        const error = `The webhook answered ${response.status}`;
        return run.attempts >= maxWebhookAttempts ? { kind: "fail", error, output } : { kind: "retry", error, delayMs: 1_000, output };
      }
      if (response.status >= 400) return { kind: "fail", error: `The webhook answered ${response.status}`, output };
      return { kind: "next", branch: "", output };
    } catch (error) {
      const message = deadline.aborted
        ? `no complete answer within ${deps.timeoutMs} ms`
        : error instanceof Error
          ? error.message
          : String(error);
      if (error instanceof OutboundRefused) return { kind: "fail", error: `The webhook was refused: ${message}`, output: { request } };
      const outcome = { error: `The webhook request failed: ${message}`, output: { request } };
      return run.attempts >= maxWebhookAttempts ? { kind: "fail", ...outcome } : { kind: "retry", delayMs: 1_000, ...outcome };
    }
  };
}
