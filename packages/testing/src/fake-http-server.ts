import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  /** Form or JSON bodies, as key/value pairs. */
  body: URLSearchParams;
}

export interface FakeHttpServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 that answers like a third-party API (GitHub,
 * Stripe): the handler returns a status and a JSON body for each request.
 */
export async function startFakeHttpServer(
  handle: (request: RecordedRequest) => { status: number; body: unknown } | Promise<{ status: number; body: unknown }>,
): Promise<FakeHttpServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const url = new URL(incoming.url ?? "/", "http://fake");
    const body = incoming.headers["content-type"]?.includes("json")
      ? new URLSearchParams(Object.entries(JSON.parse(text || "{}") as Record<string, string>))
      : new URLSearchParams(text);
    const request = { method: incoming.method ?? "GET", path: url.pathname, query: url.searchParams, headers: incoming.headers, body };
    requests.push(request);
    const { status, body: answer } = await handle(request);
    outgoing.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
