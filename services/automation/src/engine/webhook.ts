import { createHmac } from "node:crypto";
import { Resolver } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { describeProblem } from "@herald/rendering";
import type { RenderPool } from "@herald/rendering/pool";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";
import type { JsonObject, JsonValue, WebhookConfig } from "../domain/step-config.js";
import type { StepExecutor } from "./step-outcome.js";
import type { WebhookSecrets } from "./webhook-secrets.js";

/** Attempts of one webhook delivery (the first included) before the execution fails. */
const maxWebhookAttempts = 4;
const maxRedirects = 5;
const recordedBodyBytes = 2_048;

export class WebhookRefused extends Error {
  override readonly name = "WebhookRefused";
}

/** HMAC-SHA256 over "<timestamp>.<body>", as X-Herald-Signature carries it: `t=<timestamp>,v1=<hex>`. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** A DNS lookup through the given resolvers (DNS_SERVERS), A records first, then AAAA. */
function lookupThrough(servers: string[]): LookupFunction | undefined {
  if (servers.length === 0) return undefined;
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  resolver.setServers(servers);
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const answer = (addresses: string[], family: 4 | 6) =>
      options.all
        ? callback(
            null,
            addresses.map((address) => ({ address, family })),
          )
        : callback(null, addresses[0], family);
    resolver.resolve4(hostname, (error4, v4) => {
      if (!error4 && v4.length > 0) return answer(v4, 4);
      resolver.resolve6(hostname, (error6, v6) => {
        if (!error6 && v6.length > 0) return answer(v6, 6);
        callback(error4 ?? error6 ?? new Error(`${hostname} has no address`));
      });
    });
  }) as unknown as LookupFunction;
}

interface WebhookResponse {
  status: number;
  body: string;
  location?: string;
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
 * errors are retried with backoff by the runner; X-Herald-Delivery (the step run's id) stays
 * the same on every attempt, so that receivers can deduplicate.
 */
export function createWebhookExecutor(deps: {
  secrets: WebhookSecrets;
  dnsServers: string[];
  allowedAddresses: string[];
  timeoutMs: number;
  /** Where the URL, headers and body render their Liquid (createRenderPool), off the event loop that fires the timers. */
  renders: RenderPool;
}): StepExecutor {
  const lookup = lookupThrough(deps.dnsServers);
  const filtering = { allowIPAddressList: deps.allowedAddresses, ...(lookup ? { lookup } : {}) };
  const agents = { "http:": new RequestFilteringHttpAgent(filtering), "https:": new RequestFilteringHttpsAgent(filtering) };

  function send(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<WebhookResponse> {
    const agent = url.protocol === "https:" ? agents["https:"] : url.protocol === "http:" ? agents["http:"] : undefined;
    if (!agent) return Promise.reject(new WebhookRefused(`${url.protocol} URLs are not allowed`));
    const request = url.protocol === "https:" ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const outgoing = request(url, { method, headers, agent, timeout: deps.timeoutMs }, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          if (size < recordedBodyBytes) chunks.push(chunk);
          size += chunk.length;
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8").slice(0, recordedBodyBytes),
            ...(response.headers.location ? { location: response.headers.location } : {}),
          }),
        );
        response.on("error", reject);
      });
      outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer within ${deps.timeoutMs} ms`)));
      outgoing.on("error", (error) => reject(/is not allowed/.test(error.message) ? new WebhookRefused(error.message) : error));
      outgoing.end(body);
    });
  }

  return async ({ run, execution, step }) => {
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
    const headers: Record<string, string> = {
      ...renderedHeaders,
      "content-type": "application/json",
      "user-agent": "Herald-Webhooks/1",
      "x-herald-delivery": run.id,
      "x-herald-timestamp": String(timestamp),
      "x-herald-signature": webhookSignature(secret, timestamp, body ?? ""),
    };
    const request: JsonObject = {
      method: config.method,
      url: url.toString(),
      headers: { ...headers },
      ...(body === undefined ? {} : { body: body.slice(0, recordedBodyBytes) }),
    };
    try {
      let target = url;
      let response = await send(target, config.method, headers, body);
      for (let hops = 0; response.status >= 300 && response.status < 400 && response.location && hops < maxRedirects; hops++) {
        target = new URL(response.location, target);
        // A redirect is fetched as a GET without the body (as browsers do for 301–303); the agents check its address again.
        response = await send(target, "GET", { ...headers, "content-type": "application/json" }, undefined);
      }
      const output: JsonObject = { request, response: { status: response.status, body: response.body, url: target.toString() } };
      if (response.status >= 500) {
        const error = `The webhook answered ${response.status}`;
        return run.attempts >= maxWebhookAttempts ? { kind: "fail", error, output } : { kind: "retry", error, delayMs: 1_000, output };
      }
      if (response.status >= 400) return { kind: "fail", error: `The webhook answered ${response.status}`, output };
      return { kind: "next", branch: "", output };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof WebhookRefused) return { kind: "fail", error: `The webhook was refused: ${message}`, output: { request } };
      const outcome = { error: `The webhook request failed: ${message}`, output: { request } };
      return run.attempts >= maxWebhookAttempts ? { kind: "fail", ...outcome } : { kind: "retry", delayMs: 1_000, ...outcome };
    }
  };
}
