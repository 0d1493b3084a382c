import { EventEmitter } from "node:events";
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from "smtp-server";

/** One message as the sink received it. */
export interface ReceivedEmail {
  /** 1, 2, 3, … in the order the sink accepted the messages. */
  sequence: number;
  /** The envelope's MAIL FROM (empty for the null sender). */
  from: string;
  /** The envelope's accepted RCPT TO addresses. */
  to: string[];
  /** The message exactly as it came after DATA (RFC 5322, CRLF line ends, dot-stuffing removed), as UTF-8 text. */
  raw: string;
  receivedAt: string;
}

/** How the sink answers RCPT TO for one address: 550 for a permanent failure, 451 for a temporary one, … */
export interface RecipientRejection {
  code: number;
  message?: string;
}

/**
 * A real SMTP server on 127.0.0.1 for tests (smtp-server, no TLS, any AUTH accepted), keeping every
 * message in memory and, with `directory`, writing each to `<directory>/<sequence>.eml` and a line to
 * `<directory>/index.jsonl`. Tests in other processes read messages and set rejections through a small
 * HTTP control port (testSmtpSinkClient), as with the test DNS server.
 */
export interface TestSmtpSink {
  host: string;
  port: number;
  /** `smtp://user:pass@127.0.0.1:<port>`, as SMTP_URL takes it. */
  url: string;
  controlUrl: string;
  /** Every message received so far, or only those with `to` among their envelope recipients. */
  messages(to?: string): ReceivedEmail[];
  /** Resolves once `count` messages (to `to`, when given) have arrived; rejects after `timeoutMs`. */
  waitForMessages(count: number, options?: { to?: string; timeoutMs?: number }): Promise<ReceivedEmail[]>;
  rejectRecipient(address: string, rejection: RecipientRejection): void;
  acceptRecipient(address: string): void;
  /** How many times the sink refused `to` at RCPT TO, by a rejection set for it: each an attempt that delivered nothing. */
  refusals(to: string): number;
  /** Forgets the messages (the directory keeps its files). */
  clear(): void;
  stop(): Promise<void>;
}

const normalise = (address: string) => address.trim().toLowerCase();

function smtpError(rejection: RecipientRejection, address: string): Error & { responseCode: number } {
  const enhanced = rejection.code >= 500 ? "5.1.1" : "4.2.0";
  const error = new Error(rejection.message ?? `${enhanced} <${address}>: recipient rejected by the test sink`) as Error & {
    responseCode: number;
  };
  error.responseCode = rejection.code;
  return error;
}

export async function startTestSmtpSink(options: { directory?: string; maxMessageBytes?: number } = {}): Promise<TestSmtpSink> {
  const received: ReceivedEmail[] = [];
  const rejections = new Map<string, RecipientRejection>();
  const refused = new Map<string, number>();
  const arrivals = new EventEmitter();
  arrivals.setMaxListeners(0);
  let sequence = 0;
  if (options.directory) await mkdir(options.directory, { recursive: true });

  const select = (to?: string) => (to === undefined ? [...received] : received.filter((email) => email.to.includes(normalise(to))));

  async function keep(raw: Buffer, session: SMTPServerSession): Promise<number> {
    const email: ReceivedEmail = {
      sequence: ++sequence,
      from: session.envelope.mailFrom ? normalise(session.envelope.mailFrom.address) : "",
      to: session.envelope.rcptTo.map((recipient: SMTPServerAddress) => normalise(recipient.address)),
      raw: raw.toString("utf8"),
      receivedAt: new Date().toISOString(),
    };
    if (options.directory) {
      await writeFile(join(options.directory, `${email.sequence}.eml`), raw);
      const { raw: _raw, ...summary } = email;
      await appendFile(join(options.directory, "index.jsonl"), `${JSON.stringify(summary)}\n`);
    }
    // Kept only once written, so that a reader of the directory never sees a message the sink has not acknowledged.
    received.push(email);
    arrivals.emit("message");
    return email.sequence;
  }

  const server = new SMTPServer({
    logger: false,
    // Plain text only: the provider's STARTTLS would meet a self-signed certificate.
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    disableReverseLookup: true,
    size: options.maxMessageBytes ?? 50 * 1024 * 1024,
    maxClients: 1_000,
    onAuth(_auth, _session, callback) {
      callback(null, { user: "test" });
    },
    onRcptTo(address, _session, callback) {
      const recipient = normalise(address.address);
      const rejection = rejections.get(recipient);
      if (rejection) refused.set(recipient, (refused.get(recipient) ?? 0) + 1);
      callback(rejection ? smtpError(rejection, address.address) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("error", (error: Error) => callback(error));
      stream.on("end", () => {
        if (stream.sizeExceeded) {
          callback(Object.assign(new Error("5.3.4 message too big for the test sink"), { responseCode: 552 }));
          return;
        }
        keep(Buffer.concat(chunks), session).then(
          (kept) => callback(null, `2.0.0 Ok: queued as ${kept}`),
          (error: unknown) => callback(Object.assign(new Error(`4.3.0 ${String(error)}`), { responseCode: 451 })),
        );
      });
    },
  });
  server.on("error", () => {
    // A client that drops its connection is the provider tests' business, not the sink's.
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;

  function waitForMessages(count: number, waitOptions: { to?: string; timeoutMs?: number } = {}): Promise<ReceivedEmail[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = select(waitOptions.to);
        if (found.length < count) return false;
        clearTimeout(timer);
        arrivals.off("message", check);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        arrivals.off("message", check);
        reject(
          new Error(
            `the test SMTP sink has ${select(waitOptions.to).length} of ${count} messages${waitOptions.to ? ` to ${waitOptions.to}` : ""}`,
          ),
        );
      }, waitOptions.timeoutMs ?? 10_000);
      if (!check()) arrivals.on("message", check);
    });
  }

  const rejectRecipient = (address: string, rejection: RecipientRejection) => {
    if (!Number.isInteger(rejection.code) || rejection.code < 400 || rejection.code > 599) {
      throw new Error(`a rejection is a 4xx or 5xx SMTP code, not ${rejection.code}`);
    }
    rejections.set(normalise(address), rejection);
  };
  const acceptRecipient = (address: string) => {
    rejections.delete(normalise(address));
  };
  const clear = () => {
    received.length = 0;
  };

  // GET /messages[?to=<address>] lists messages (raw included) as JSON; DELETE /messages forgets them;
  // PUT /rejections/<address> with { code, message? } rejects a recipient; DELETE /rejections/<address> accepts it again.
  const control = createHttpServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? "/", "http://sink");
    const rejection = /^\/rejections\/([^/]+)$/.exec(url.pathname);
    const address = rejection?.[1] ? decodeURIComponent(rejection[1]) : undefined;
    try {
      if (url.pathname === "/messages" && request.method === "GET") {
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(select(url.searchParams.get("to") ?? undefined)));
      } else if (url.pathname === "/messages" && request.method === "DELETE") {
        clear();
        response.writeHead(204).end();
      } else if (address && request.method === "PUT") {
        const body = JSON.parse(Buffer.concat(chunks).toString() || "{}") as Partial<RecipientRejection>;
        rejectRecipient(address, { code: Number(body.code), ...(typeof body.message === "string" ? { message: body.message } : {}) });
        response.writeHead(204).end();
      } else if (address && request.method === "DELETE") {
        acceptRecipient(address);
        response.writeHead(204).end();
      } else {
        response.writeHead(404).end();
      }
    } catch (error) {
      response.writeHead(400).end(String(error));
    }
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));

  return {
    host: "127.0.0.1",
    port,
    url: `smtp://user:pass@127.0.0.1:${port}`,
    controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    messages: select,
    waitForMessages,
    rejectRecipient,
    acceptRecipient,
    refusals: (to) => refused.get(normalise(to)) ?? 0,
    clear,
    async stop() {
      control.closeAllConnections();
      // Pooled clients keep idle connections open: end them rather than wait for them to leave.
      for (const connection of server.connections) connection.close();
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        new Promise<void>((resolve) => control.close(() => resolve())),
      ]);
    },
  };
}

/** Reads messages and sets rejections of a TestSmtpSink from another process (a test file), through its control port. */
export function testSmtpSinkClient(controlUrl: string) {
  async function call(method: "GET" | "PUT" | "DELETE", path: string, body?: unknown): Promise<Response> {
    const response = await fetch(`${controlUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`test SMTP sink answered ${response.status} to ${method} ${path}: ${await response.text()}`);
    return response;
  }
  const messages = async (to?: string): Promise<ReceivedEmail[]> =>
    (await (await call("GET", `/messages${to === undefined ? "" : `?to=${encodeURIComponent(to)}`}`)).json()) as ReceivedEmail[];
  return {
    messages,
    /** Polls until `count` messages (to `to`, when given) have arrived. */
    async waitForMessages(count: number, options: { to?: string; timeoutMs?: number } = {}): Promise<ReceivedEmail[]> {
      const deadline = Date.now() + (options.timeoutMs ?? 10_000);
      for (;;) {
        const found = await messages(options.to);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`the test SMTP sink has ${found.length} of ${count} messages`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    clear: async () => {
      await call("DELETE", "/messages");
    },
    rejectRecipient: async (address: string, rejection: RecipientRejection) => {
      await call("PUT", `/rejections/${encodeURIComponent(address)}`, rejection);
    },
    acceptRecipient: async (address: string) => {
      await call("DELETE", `/rejections/${encodeURIComponent(address)}`);
    },
  };
}
