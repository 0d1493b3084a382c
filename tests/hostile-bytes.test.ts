import { randomBytes } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus } from "@herald/proto/grpc/health/v1/health_pb";
import {
  byteAtATime,
  frameType,
  hpackBlock,
  http2Frame,
  http2Preface,
  type RawStep,
  rawExchange,
  type ServiceName,
  serviceNames,
  statusLineOf,
  waitUntil,
} from "@herald/testing";
import { describe, expect, inject, it } from "vitest";
import { createProject, restClient, signUp } from "./support/http.js";

/**
 * Issue 28 ("Containment"): no bytes a client sends, however malformed, end or wedge a process. Each case goes over a
 * raw TCP socket (no library would send it) to one listener of the shared stack, and the process must still answer on
 * that listener afterwards; at the end, every process answers its health check and a real request.
 */
const herald = inject("herald");
const { stack, inboundSmtp } = herald;
const call = restClient(stack.gatewayUrl);
const processes = [...serviceNames, "gateway"] as const;
const host = "127.0.0.1";
const portOf = (url: string) => Number(new URL(url).port);

interface RawCase {
  name: string;
  steps: RawStep[];
  /** The answer must be a 4xx status line (a request the server could read enough of to refuse). */
  refused?: boolean;
}

const crlf = (...lines: string[]) => `${lines.join("\r\n")}\r\n`;

/** Bytes for any HTTP/1.1 listener: the gateway's port and every metrics port. */
const http1Cases: RawCase[] = [
  { name: "absolute-form target with a bad host (GET http://[)", steps: [crlf("GET http://[ HTTP/1.1", "host: x", "")], refused: true },
  { name: "absolute-form target without host header (GET http://[)", steps: [crlf("GET http://[ HTTP/1.1", "")], refused: true },
  // Parsed, and routed as any other path: the gateway answers it as its dashboard's fallback, the metrics server 400.
  { name: "asterisk-form target (GET *)", steps: [crlf("GET * HTTP/1.1", "host: x", "")] },
  { name: "bare CONNECT", steps: [crlf("CONNECT", "")], refused: true },
  { name: "CONNECT to an authority", steps: [crlf("CONNECT example.com:443 HTTP/1.1", "host: example.com:443", "")] },
  { name: "a Host header that is no host", steps: [crlf("GET /health HTTP/1.1", "host: [::1", "")] },
  { name: "a path with bytes no URL has", steps: [crlf("GET /%zz/\u00ff/../..//x?%% HTTP/1.1", "host: x", "")] },
  { name: "binary garbage", steps: [randomBytes(4096)] },
  { name: "an HTTP/2 preface on an HTTP/1.1 port", steps: [http2Preface, http2Frame(frameType.settings, 0, 0)] },
  {
    name: "two different Content-Length headers",
    steps: [
      crlf("POST /v1/track HTTP/1.1", "host: x", "content-type: application/json", "content-length: 2", "content-length: 20", "", "{}"),
    ],
    refused: true,
  },
  {
    name: "Content-Length and chunked Transfer-Encoding together",
    steps: [crlf("POST /v1/track HTTP/1.1", "host: x", "content-length: 4", "transfer-encoding: chunked", "", "0", "", "")],
    refused: true,
  },
  {
    name: "a bad chunk size",
    steps: [crlf("POST /v1/track HTTP/1.1", "host: x", "transfer-encoding: chunked", "", "zz", "{}", "0", "", "")],
  },
  { name: "a 100 KB header", steps: [crlf("GET /health HTTP/1.1", "host: x", `x-big: ${"a".repeat(100 * 1024)}`, "")], refused: true },
  {
    name: "2,000 duplicated headers",
    steps: [crlf("GET /health HTTP/1.1", "host: x", ...Array.from({ length: 2_000 }, () => "cookie: a=b"), "")],
    refused: true,
  },
  {
    name: "a body shorter than its Content-Length, then close",
    steps: [crlf("POST /v1/track HTTP/1.1", "host: x", "content-type: application/json", "content-length: 100000", "", '{"event":')],
  },
  { name: "headers a byte at a time, then close", steps: byteAtATime("GET /health HTTP/1.1\r\nhost: x\r\nx-slow: ") },
  { name: "a request line without end, then close", steps: [`GET /${"a".repeat(64 * 1024)}`] },
];

/** One request of gRPC's health check, as HEADERS and DATA frames, with the given header fields. */
const healthCheckFrames = (fields: Array<[string, string]>, streamId = 1): Buffer[] => [
  http2Frame(frameType.headers, 0x4, streamId, hpackBlock(fields)),
  http2Frame(frameType.data, 0x1, streamId, Buffer.from([0, 0, 0, 0, 0])),
];
const grpcFields = (authority: string, path = "/grpc.health.v1.Health/Check"): Array<[string, string]> => [
  [":method", "POST"],
  [":scheme", "http"],
  [":path", path],
  [":authority", authority],
  ["content-type", "application/grpc"],
  ["te", "trailers"],
];
const settings = http2Frame(frameType.settings, 0, 0);

/** Bytes for the services' cleartext HTTP/2 (h2c) ports. */
const http2Cases: RawCase[] = [
  { name: "an HTTP/1.1 request (GET http://[)", steps: [crlf("GET http://[ HTTP/1.1", "host: x", "")] },
  { name: "an HTTP/1.1 request (GET *)", steps: [crlf("GET * HTTP/1.1", "host: x", "")] },
  { name: "a truncated preface, then close", steps: [http2Preface.slice(0, 10)] },
  { name: "garbage after the preface", steps: [http2Preface, randomBytes(4096)] },
  { name: "the preface a byte at a time, then close", steps: byteAtATime(http2Preface) },
  {
    name: "nonsense frames after the preface",
    steps: [
      http2Preface,
      settings,
      http2Frame(frameType.data, 0, 0, Buffer.from("data on stream 0")),
      http2Frame(frameType.ping, 0, 0, Buffer.from("short")),
      http2Frame(frameType.windowUpdate, 0, 1, Buffer.from([0, 0, 0, 0])),
      http2Frame(0xee, 0xff, 7, randomBytes(64)),
    ],
  },
  {
    name: "a frame longer than the largest frame size",
    steps: [http2Preface, settings, http2Frame(frameType.headers, 0x4, 1, randomBytes(32), 1 << 23)],
  },
  { name: "a header block that is no HPACK", steps: [http2Preface, settings, http2Frame(frameType.headers, 0x5, 1, randomBytes(200))] },
  { name: "a request whose :authority is no host", steps: [http2Preface, settings, ...healthCheckFrames(grpcFields("["))] },
  { name: "a request whose :path is absolute-form", steps: [http2Preface, settings, ...healthCheckFrames(grpcFields("x", "http://["))] },
  {
    name: "a request without :authority",
    steps: [http2Preface, settings, ...healthCheckFrames(grpcFields("x").filter(([name]) => name !== ":authority"))],
  },
  {
    name: "duplicated pseudo-headers",
    steps: [http2Preface, settings, ...healthCheckFrames([...grpcFields("x"), [":path", "/other"], [":authority", "["]])],
  },
  {
    name: "a 100 KB header over CONTINUATION frames",
    steps: [
      http2Preface,
      settings,
      http2Frame(frameType.headers, 0, 1, hpackBlock(grpcFields("x"))),
      ...Array.from({ length: 7 }, (_, index) =>
        http2Frame(frameType.continuation, index === 6 ? 0x4 : 0, 1, hpackBlock([[`x-big-${index}`, "a".repeat(15_000)]])),
      ),
      http2Frame(frameType.data, 0x1, 1, Buffer.from([0, 0, 0, 0, 0])),
    ],
  },
  {
    name: "a message shorter than its length prefix, then close",
    steps: [
      http2Preface,
      settings,
      http2Frame(frameType.headers, 0x4, 1, hpackBlock(grpcFields("x"))),
      http2Frame(frameType.data, 0, 1, Buffer.from([0, 0, 0x10, 0, 0, 1, 2])),
    ],
  },
];

const bounceRecipient = `fbl@${inboundSmtp.bounceDomain}`;

/** Lines for the inbound SMTP listener. */
const smtpCases: RawCase[] = [
  { name: "binary garbage lines", steps: [randomBytes(2048), "\r\n", randomBytes(2048), "\r\n"] },
  { name: "an overlong line", steps: [`EHLO ${"a".repeat(200 * 1024)}\r\n`] },
  {
    name: "pipelined junk",
    steps: [crlf("EHLO x", "MAIL FROM:<>", "JUNK", `RCPT TO:<${bounceRecipient}>`, "DATA", "x", ".", "RSET", "NOOP junk", "HELO")],
  },
  { name: "DATA without MAIL FROM", steps: [crlf("EHLO x", "DATA", "Subject: none", "", "body", ".")] },
  { name: "RCPT TO without MAIL FROM", steps: [crlf("EHLO x", `RCPT TO:<${bounceRecipient}>`)] },
  {
    name: "a dropped connection mid-DATA",
    steps: [
      crlf("EHLO x", "MAIL FROM:<>"),
      { pauseMs: 100 },
      crlf(`RCPT TO:<${bounceRecipient}>`, "DATA"),
      { pauseMs: 100 },
      "Subject: cut\r\n\r\nhalf a",
    ],
  },
  { name: "an HTTP request", steps: [crlf("GET http://[ HTTP/1.1", "host: x", "")] },
  { name: "a command a byte at a time, then close", steps: byteAtATime("EHLO slow.example\r\nMAIL FROM:<") },
];

/** Whether the process answers a new connection on this listener, within a generous deadline (the machine is shared). */
async function answers(kind: "gateway" | "metrics" | "rpc" | "smtp", url: string, port: number): Promise<boolean> {
  if (kind === "gateway") return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) })).status === 200;
  if (kind === "metrics") return (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).status === 200;
  if (kind === "rpc") {
    const health = createClient(Health, createGrpcTransport({ baseUrl: url, defaultTimeoutMs: 10_000 }));
    return (await health.check({ service: "" })).status === HealthCheckResponse_ServingStatus.SERVING;
  }
  const answer = (await rawExchange(host, port, [crlf("EHLO alive.example", "QUIT")], { greeting: true, waitMs: 10_000 })).toString();
  return /^220 /.test(answer) && /^250[ -]/m.test(answer);
}

/** The process still answers on this listener; one that ended or wedged never will. */
const expectServing = (kind: "gateway" | "metrics" | "rpc" | "smtp", url: string, port: number) =>
  waitUntil(() => answers(kind, url, port), { timeoutMs: 30_000, describe: () => `${kind} at ${url || port} no longer answers` });

/**
 * One test per case, run a few at a time (vitest's maxConcurrency): most of a case is waiting for the listener to close or
 * stay silent, and cases sent side by side to one listener are no gentler on it than one after another.
 */
function hostileCases(kind: "gateway" | "metrics" | "rpc" | "smtp", url: string, port: number, cases: RawCase[]) {
  it.concurrent.for(cases)("$name", async ({ steps, refused }, { expect }) => {
    const answer = await rawExchange(host, port, steps, { greeting: kind === "smtp" });
    if (refused) expect(statusLineOf(answer)).toMatch(/^HTTP\/1\.1 4\d\d /);
    await expectServing(kind, url, port);
  });
}

describe("hostile bytes to every listener of every process (issue 28)", () => {
  describe("the gateway's HTTP port", () => {
    hostileCases("gateway", stack.gatewayUrl, portOf(stack.gatewayUrl), http1Cases);
  });

  for (const name of processes) {
    describe(`${name}'s metrics port`, () => {
      hostileCases("metrics", stack.metricsUrls[name], portOf(stack.metricsUrls[name]), http1Cases);
    });
  }

  for (const name of serviceNames) {
    describe(`${name}'s gRPC (h2c) port`, () => {
      hostileCases("rpc", stack.serviceUrls[name as ServiceName], portOf(stack.serviceUrls[name]), http2Cases);
    });
  }

  describe("delivery's inbound SMTP port", () => {
    hostileCases("smtp", "", inboundSmtp.port, smtpCases);
  });

  it("leaves every process up and answering: its health, its metrics and a real request", async () => {
    for (const name of serviceNames) await expectServing("rpc", stack.serviceUrls[name], portOf(stack.serviceUrls[name]));
    for (const name of processes) await expectServing("metrics", stack.metricsUrls[name], portOf(stack.metricsUrls[name]));
    await expectServing("gateway", stack.gatewayUrl, portOf(stack.gatewayUrl));
    await expectServing("smtp", "", inboundSmtp.port);
    // identity, then a request that reaches each other service through the gateway.
    const project = await createProject(call, (await signUp(call, "hostile")).cookie, "Hostile bytes");
    const key = project.secretKey;
    const tracked = await call("POST", "/v1/track", { key: project.publicKey, body: { email: "still-up@example.com", event: "survived" } });
    expect(tracked.status).toBe(200);
    expect((await call("GET", "/templates", { key })).status).toBe(200);
    expect((await call("GET", "/campaigns", { key })).status).toBe(200);
    expect((await call("GET", "/workflows", { key })).status).toBe(200);
  });
});
