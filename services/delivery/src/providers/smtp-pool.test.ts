import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createSmtpPool, type SmtpError, type SmtpPool } from "./smtp-pool.js";

/** A relay of our own (smtp-server, with its built-in self-signed certificate for STARTTLS) that counts what it sees. */
async function startRelay(options: Partial<SMTPServerOptions> = {}) {
  const seen = { connections: 0, logins: [] as string[], messages: [] as Array<{ connection: string; secure: boolean; raw: string }> };
  const server = new SMTPServer({
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    onConnect(_session, callback) {
      seen.connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      seen.logins.push(`${auth.username}:${auth.password}`);
      if (auth.password !== "secret") return callback(Object.assign(new Error("5.7.8 bad credentials"), { responseCode: 535 }));
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        seen.messages.push({ connection: session.id, secure: session.secure, raw: Buffer.concat(chunks).toString() });
        callback(null, `2.0.0 Ok: queued as ${seen.messages.length}`);
      });
    },
    ...options,
  });
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    seen,
    port,
    server,
    /** Ends every open session from the server's side, as a relay does after its idle timeout. */
    dropConnections() {
      // biome-ignore lint/suspicious/noExplicitAny: smtp-server keeps its sessions in an untyped Set.
      for (const connection of (server as any).connections as Set<{ close(): void }>) connection.close();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const raw = (n: number) =>
  Buffer.from(`From: a@example.com\r\nTo: b@example.org\r\nSubject: ${n}\r\n\r\n.line starting with a dot ${n}\r\n`);
const envelope = { from: "a@example.com", to: ["b@example.org"] };
const pools: SmtpPool[] = [];
const relays: Array<{ stop(): Promise<void> }> = [];

function pool(url: string, overrides: Partial<Parameters<typeof createSmtpPool>[0]> = {}): SmtpPool {
  const created = createSmtpPool({
    url,
    maxConnections: 3,
    maxMessagesPerConnection: 100,
    connectionTimeoutMs: 5_000,
    greetingTimeoutMs: 5_000,
    socketTimeoutMs: 30_000,
    idleTimeoutMs: 60_000,
    ...overrides,
  });
  pools.push(created);
  return created;
}

afterEach(async () => {
  for (const created of pools.splice(0)) created.close();
  for (const relay of relays.splice(0)) await relay.stop();
});

describe("SMTP pool", () => {
  it("reuses at most maxConnections connections for many messages, each delivered once and dot-stuffed", async () => {
    const relay = await startRelay();
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`);
    const replies = await Promise.all(Array.from({ length: 60 }, (_, n) => smtp.send(envelope, raw(n), 60_000)));
    expect(replies.every((reply) => /^250 2\.0\.0 Ok: queued as \d+$/.test(reply))).toBe(true);
    expect(relay.seen.messages).toHaveLength(60);
    expect(relay.seen.connections).toBeLessThanOrEqual(3);
    expect(new Set(relay.seen.messages.map((message) => message.connection)).size).toBeLessThanOrEqual(3);
    expect(new Set(relay.seen.messages.map((message) => /Subject: (\d+)/.exec(message.raw)?.[1])).size).toBe(60);
    expect(relay.seen.messages[0]?.raw).toContain("\r\n.line starting with a dot");
  });

  it("opens a new connection after maxMessagesPerConnection messages", async () => {
    const relay = await startRelay();
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`, { maxConnections: 1, maxMessagesPerConnection: 2 });
    for (let n = 0; n < 5; n++) await smtp.send(envelope, raw(n), 60_000);
    const sessions = relay.seen.messages.map((message) => message.connection);
    expect(new Set(sessions).size).toBe(3);
    expect(sessions[0]).toBe(sessions[1]);
    expect(sessions[1]).not.toBe(sessions[2]);
  });

  it("upgrades with STARTTLS and logs in with the URL's credentials", async () => {
    const relay = await startRelay({ authMethods: ["PLAIN", "LOGIN"] });
    relays.push(relay);
    const smtp = pool(`smtp://herald:secret@127.0.0.1:${relay.port}?requireTLS=true&tls.rejectUnauthorized=false`);
    await smtp.send(envelope, raw(1), 60_000);
    await smtp.send(envelope, raw(2), 60_000);
    expect(relay.seen.logins).toEqual(["herald:secret"]);
    expect(relay.seen.messages.map((message) => message.secure)).toEqual([true, true]);
  });

  it("fails with the relay's answer when it refuses the credentials", async () => {
    const relay = await startRelay();
    relays.push(relay);
    const smtp = pool(`smtp://herald:wrong@127.0.0.1:${relay.port}?requireTLS=true&tls.rejectUnauthorized=false`);
    const failure = (await smtp.send(envelope, raw(1), 60_000).catch((error: unknown) => error)) as SmtpError;
    expect(failure.code).toBe("EAUTH");
    expect(failure.responseCode).toBe(535);
    expect(relay.seen.messages).toEqual([]);
  });

  it("keeps the connection after a refused message (RSET), and reports the reply code and text", async () => {
    const relay = await startRelay({
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith("gone@")) return callback(Object.assign(new Error("5.1.1 no such user"), { responseCode: 550 }));
        if (address.address.startsWith("later@")) return callback(Object.assign(new Error("4.2.2 mailbox full"), { responseCode: 452 }));
        callback();
      },
    });
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`, { maxConnections: 1 });
    const refused = (await smtp
      .send({ ...envelope, to: ["gone@example.org"] }, raw(1), 60_000)
      .catch((error: unknown) => error)) as SmtpError;
    expect(refused).toMatchObject({ code: "EENVELOPE", command: "RCPT TO", responseCode: 550, response: "550 5.1.1 no such user" });
    const deferred = (await smtp
      .send({ ...envelope, to: ["later@example.org"] }, raw(2), 60_000)
      .catch((error: unknown) => error)) as SmtpError;
    expect(deferred).toMatchObject({ responseCode: 452, response: "452 4.2.2 mailbox full" });
    await smtp.send(envelope, raw(3), 60_000);
    expect(relay.seen.connections).toBe(1);
    expect(relay.seen.messages).toHaveLength(1);
  });

  it("does not send again at once a message whose destination answered 421 after MAIL FROM, and reports the 421", async () => {
    let deferrals = 0;
    const relay = await startRelay({
      onRcptTo(address, _session, callback) {
        if (!address.address.startsWith("deferred@")) return callback();
        deferrals++;
        callback(Object.assign(new Error("4.7.0 Try again later, closing connection"), { responseCode: 421 }));
      },
    });
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`, { maxConnections: 1 });
    await smtp.send(envelope, raw(1), 60_000);
    // On the reused connection: a connection that was gone would be worth a retry, this answer is not.
    const failure = (await smtp
      .send({ ...envelope, to: ["deferred@example.org"] }, raw(2), 60_000)
      .catch((error: unknown) => error)) as SmtpError;
    expect(failure).toMatchObject({ responseCode: 421 });
    expect(deferrals).toBe(1);
    await smtp.send(envelope, raw(3), 60_000);
    expect(relay.seen.messages).toHaveLength(2);
  });

  it("sends over a new connection when the relay closed the pooled ones meanwhile", async () => {
    const relay = await startRelay();
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`, { maxConnections: 2 });
    await Promise.all([smtp.send(envelope, raw(1), 60_000), smtp.send(envelope, raw(2), 60_000)]);
    // The second connection may still be greeting the relay (the first can serve both sends): let it reach the pool
    // unused. A session the relay ends before it is ready fails its one send, which the dispatcher retries later.
    await new Promise((resolve) => setTimeout(resolve, 100));
    relay.dropConnections();
    await Promise.all([smtp.send(envelope, raw(3), 60_000), smtp.send(envelope, raw(4), 60_000)]);
    expect(relay.seen.messages).toHaveLength(4);
    expect(relay.seen.connections).toBeGreaterThan(2);
  });

  it("fails a send that outlasts its timeout, and the next send gets a working connection", async () => {
    let stall = true;
    const relay = await startRelay({
      onData(stream, _session, callback) {
        stream.on("data", () => {});
        stream.on("end", () => {
          if (stall) return; // never answers this message
          callback(null, "2.0.0 Ok");
        });
      },
    });
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`, { maxConnections: 1 });
    const failure = (await smtp.send(envelope, raw(1), 300).catch((error: unknown) => error)) as SmtpError;
    expect(failure).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT" });
    stall = false;
    await expect(smtp.send(envelope, raw(2), 60_000)).resolves.toBe("250 2.0.0 Ok");
    expect(relay.seen.connections).toBe(2);
  });

  it("gives the wait for a connection and the transmission a limit each, so that a message is not failed while the relay accepts it", async () => {
    const relay = await startRelay({
      onData(stream, _session, callback) {
        stream.on("data", () => {});
        stream.on("end", () => setTimeout(() => callback(null, "2.0.0 Ok"), 300));
      },
    });
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`, { maxConnections: 1 });
    // The second waits about 300 ms for the one connection, then takes about 300 ms more: over 500 ms in all, under it each.
    await expect(Promise.all([smtp.send(envelope, raw(1), 500), smtp.send(envelope, raw(2), 500)])).resolves.toEqual([
      "250 2.0.0 Ok",
      "250 2.0.0 Ok",
    ]);
    expect(relay.seen.connections).toBe(1);
  });

  it("gives up a send that finds no free connection in time before anything of it is sent, and keeps the connection", async () => {
    const received: string[] = [];
    const relay = await startRelay({
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          received.push(Buffer.concat(chunks).toString());
          setTimeout(() => callback(null, "2.0.0 Ok"), 600);
        });
      },
    });
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`, { maxConnections: 1 });
    const first = smtp.send(envelope, raw(1), 5_000);
    const failure = (await smtp.send(envelope, raw(2), 200).catch((error: unknown) => error)) as SmtpError;
    expect(failure).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT", message: "no SMTP connection was free within 200 ms" });
    await expect(first).resolves.toBe("250 2.0.0 Ok");
    await expect(smtp.send(envelope, raw(3), 5_000)).resolves.toBe("250 2.0.0 Ok");
    expect(received.map((message) => /Subject: (\d+)/.exec(message)?.[1])).toEqual(["1", "3"]);
    expect(relay.seen.connections).toBe(1);
  });

  it("hands a free connection to an urgent send before the bulk sends that waited longer", async () => {
    const relay = await startRelay({
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          relay.seen.messages.push({ connection: "", secure: false, raw: Buffer.concat(chunks).toString() });
          setTimeout(() => callback(null, "2.0.0 Ok"), 100);
        });
      },
    });
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`, { maxConnections: 1 });
    const first = smtp.send(envelope, raw(1), 5_000, "bulk");
    // The one connection is busy with the first message before the others ask for it.
    await vi.waitFor(() => expect(relay.seen.messages).toHaveLength(1));
    const later = [smtp.send(envelope, raw(2), 5_000, "bulk"), smtp.send(envelope, raw(3), 5_000, "bulk")];
    const urgent = smtp.send(envelope, raw(4), 5_000, "urgent");
    await Promise.all([first, ...later, urgent]);
    expect(relay.seen.messages.map((message) => /Subject: (\d+)/.exec(message.raw)?.[1])).toEqual(["1", "4", "2", "3"]);
  });

  it("refuses sends once closed", async () => {
    const relay = await startRelay();
    relays.push(relay);
    const smtp = pool(`smtp://127.0.0.1:${relay.port}?ignoreTLS=true`);
    await smtp.send(envelope, raw(1), 60_000);
    smtp.close();
    const failure = (await smtp.send(envelope, raw(2), 60_000).catch((error: unknown) => error)) as SmtpError;
    expect(failure.code).toBe("ECONNECTION");
    expect(relay.seen.messages).toHaveLength(1);
  });
});
