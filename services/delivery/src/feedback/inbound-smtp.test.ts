import { createLogger } from "@herald/platform";
import { createTransport } from "nodemailer";
import SMTPConnection from "nodemailer/lib/smtp-connection";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmailEventRecorder } from "./email-events.js";
import { clientOf, createInboundSmtp, type InboundSmtp } from "./inbound-smtp.js";
import { createReturnPaths } from "./return-path.js";

const returnPaths = createReturnPaths({ domain: "bounces.inbound-smtp.test", secret: "inbound smtp test secret, 32+ characters" });
// Only messages that are no report are sent here: they are dropped before anything is recorded.
const events: EmailEventRecorder = {
  record: () => Promise.reject(new Error("no report is sent in these tests")),
} as unknown as EmailEventRecorder;

const maxMessageBytes = 200 * 1024;
const bufferBytes = 100 * 1024;

/** A plain message (no report) of about `bytes` bytes to fbl@, over a real SMTP client. */
async function sendOf(port: number, bytes: number): Promise<string> {
  const client = createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
  try {
    const info = await client.sendMail({
      from: "<>",
      envelope: { from: "", to: returnPaths.feedbackAddress },
      to: returnPaths.feedbackAddress,
      subject: "Out of office",
      text: "x".repeat(bytes),
    });
    return info.response;
  } finally {
    client.close();
  }
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { responseCode?: number }) => error.responseCode,
  );

describe("inbound SMTP's bounds (issue 20)", () => {
  let inbound: InboundSmtp;
  let port: number;

  beforeAll(async () => {
    inbound = createInboundSmtp({
      returnPaths,
      events,
      logger: createLogger({ name: "inbound-smtp-test", level: "silent" }),
      maxMessageBytes,
      maxClients: 200,
      maxConnectionsPerIp: 2,
      bufferBytes,
    });
    port = await inbound.listen(0, "127.0.0.1");
  });
  afterAll(() => inbound.close());

  it("accepts a message within every bound", async () => {
    expect(await sendOf(port, 10 * 1024)).toMatch(/^250/);
  });

  it("refuses a message past its size with 552", async () => {
    expect(await failureOf(sendOf(port, maxMessageBytes + 1024))).toBe(552);
  });

  it("refuses a message that would fill the shared buffer with 452, and frees what it held", async () => {
    expect(await failureOf(sendOf(port, bufferBytes + 1024))).toBe(452);
    expect(await sendOf(port, bufferBytes - 16 * 1024)).toMatch(/^250/);
    expect(await sendOf(port, bufferBytes - 16 * 1024)).toMatch(/^250/);
  });

  it("refuses a connection past the per-address bound with 421, and takes one again once a slot is free", async () => {
    const open: SMTPConnection[] = [];
    const connect = () =>
      new Promise<SMTPConnection>((resolve, reject) => {
        const connection = new SMTPConnection({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
        connection.once("error", reject);
        connection.connect(() => {
          open.push(connection);
          resolve(connection);
        });
      });
    await connect();
    await connect();
    const third = (await failureOf(connect())) ?? "connected";
    expect(third).toBe(421);
    const closed = open.shift();
    await new Promise<void>((resolve) => {
      closed?.once("end", () => resolve());
      closed?.quit();
    });
    // The server counts the connection closed once its socket closes, a moment after the client's.
    let again: SMTPConnection | undefined;
    for (let attempt = 0; attempt < 50 && !again; attempt++) {
      again = await connect().catch(() => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 100)));
    }
    expect(again?.stage).toBe("connected");
    for (const connection of open) connection.close();
  });
});

/** An SMTP connection from the given local address (any of 127.0.0.0/8 reaches a listener on 127.0.0.1). */
function connectFrom(port: number, localAddress: string): Promise<SMTPConnection> {
  return new Promise((resolve, reject) => {
    const connection = new SMTPConnection({ host: "127.0.0.1", port, localAddress, secure: false, ignoreTLS: true });
    connection.once("error", reject);
    connection.connect(() => resolve(connection));
  });
}

/** Retries a connection that a closing one may still stand in the way of, for a bounded while. */
async function connectSoon(port: number, localAddress: string): Promise<SMTPConnection> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      return await connectFrom(port, localAddress);
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw lastError;
}

describe("inbound SMTP shares its connections between clients (issue 28)", () => {
  let inbound: InboundSmtp;
  let port: number;
  const open: SMTPConnection[] = [];

  beforeAll(async () => {
    inbound = createInboundSmtp({
      returnPaths,
      events,
      logger: createLogger({ name: "inbound-smtp-test", level: "silent" }),
      maxMessageBytes,
      maxClients: 3,
      maxConnectionsPerIp: 2,
      bufferBytes,
    });
    port = await inbound.listen(0, "127.0.0.1");
  });
  afterAll(async () => {
    for (const connection of open) connection.close();
    await inbound.close();
  });

  it("holds one address to its share with 421, serves another address, and refuses past maxClients with 421", async () => {
    open.push(await connectFrom(port, "127.0.0.1"), await connectFrom(port, "127.0.0.1"));
    const overShare = await connectFrom(port, "127.0.0.1").then(
      (connection) => connection,
      (error: { responseCode?: number; message: string }) => error,
    );
    if (overShare instanceof SMTPConnection) open.push(overShare);
    expect(overShare).toMatchObject({ responseCode: 421, message: expect.stringMatching(/too many connections from your address/) });
    // Another address takes the listener's third connection (once the refused one has closed).
    open.push(await connectSoon(port, "127.0.0.2"));
    // The listener is full: a third address is refused too, by the total.
    const overTotal = await connectFrom(port, "127.0.0.3").then(
      (connection) => connection,
      (error: { responseCode?: number; message: string }) => error,
    );
    if (overTotal instanceof SMTPConnection) open.push(overTotal);
    expect(overTotal).toMatchObject({ responseCode: 421, message: expect.stringMatching(/Too many connected clients/) });
  });

  it("counts an IPv4-mapped address as its IPv4 address, and an IPv6 client by its /64", () => {
    expect(clientOf("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(clientOf("192.0.2.7")).toBe("192.0.2.7");
    expect(clientOf("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(clientOf("2001:0DB8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(clientOf("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(clientOf("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientOf("::1")).toBe("0:0:0:0::/64");
  });
});
