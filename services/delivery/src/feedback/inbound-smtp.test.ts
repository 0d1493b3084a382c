import { createLogger } from "@herald/platform";
import { createTransport } from "nodemailer";
import SMTPConnection from "nodemailer/lib/smtp-connection";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmailEventRecorder } from "./email-events.js";
import { createInboundSmtp, type InboundSmtp } from "./inbound-smtp.js";
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
