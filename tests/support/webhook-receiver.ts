import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** The loopback address the tests' webhook receiver listens on: the only private one the stack's WEBHOOK steps may reach. */
export const webhookReceiverAddress = "127.0.0.2";

/** One request the receiver took. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receiver does with a request: answer a status, or never answer (the sender's deadline ends it). */
export type ReceiverAnswer = number | "hang";

/**
 * An HTTP server on the tests' receiver address for outbound webhooks (tests/webhooks-out*.test.ts): it records every
 * request by path and answers each path's scripted answers in turn, then 200; a 3xx answer redirects to /followed.
 */
export async function startWebhookReceiver(): Promise<{
  url: (path: string) => string;
  received: (path: string) => ReceivedWebhook[];
  script: (path: string, answers: ReceiverAnswer[]) => void;
  close: () => Promise<void>;
}> {
  const requests: ReceivedWebhook[] = [];
  const scripts = new Map<string, ReceiverAnswer[]>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const path = request.url ?? "/";
      requests.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      const answer = scripts.get(path)?.shift() ?? 200;
      if (answer === "hang") return;
      // A redirect names /followed, where a sender that followed it would be seen.
      const location = answer >= 300 && answer < 400 ? { location: "/followed" } : {};
      response.writeHead(answer, { "content-type": "text/plain", ...location }).end(answer >= 300 ? `answer ${answer}` : "ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, webhookReceiverAddress, resolve));
  const base = `http://${webhookReceiverAddress}:${(server.address() as AddressInfo).port}`;
  return {
    url: (path) => `${base}${path}`,
    received: (path) => requests.filter((request) => request.path === path),
    script: (path, answers) => scripts.set(path, [...answers]),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
