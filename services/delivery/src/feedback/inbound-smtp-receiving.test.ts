import { createLogger } from "@herald/platform";
import { createTransport } from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReceivedMail, ReceivedMessage } from "../inbound/received-mail.js";
import type { ReceivingAnswer, ReceivingDomains } from "../inbound/receiving-domains.js";
import type { EmailEventRecorder } from "./email-events.js";
import { createInboundSmtp, type InboundSmtp } from "./inbound-smtp.js";
import { createReturnPaths } from "./return-path.js";

const returnPaths = createReturnPaths({ domain: "bounces.receiving.test", secret: "inbound receiving test secret, 32+ characters" });
const events = { record: () => Promise.reject(new Error("no report is sent in these tests")) } as unknown as EmailEventRecorder;

/** Which domains "receive" here: the database and DNS parts are receiving-domains.ts's, proven end to end in tests/inbound.test.ts. */
const answers: Record<string, ReceivingAnswer> = {
  "shop.test": { kind: "receive", projectIds: ["project-a"] },
  "busy.test": { kind: "receive", projectIds: ["project-b"] },
  "dns-down.test": { kind: "unknown" },
};
const domains = { projectsFor: async (domain: string) => answers[domain] ?? { kind: "none" } } as ReceivingDomains;
const recorded: Array<{ projectId: string; recipient: string; message: ReceivedMessage }> = [];
const mail = {
  record: async (projectId: string, recipient: string, message: ReceivedMessage) => {
    recorded.push({ projectId, recipient, message });
    return true;
  },
} as ReceivedMail;

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: { responseCode?: number }) => error.responseCode,
  );

describe("inbound SMTP for projects' domains: what it accepts and its bounds", () => {
  let inbound: InboundSmtp;
  let send: ReturnType<typeof createTransport>["sendMail"];

  beforeAll(async () => {
    inbound = createInboundSmtp({
      returnPaths,
      events,
      logger: createLogger({ name: "inbound-receiving-test", level: "silent" }),
      maxMessageBytes: 64 * 1024,
      maxClients: 200,
      maxConnectionsPerIp: 5,
      bufferBytes: 256 * 1024,
      receiving: { domains, mail, projectMessagesPerMinute: 2, maxRecipients: 3 },
    });
    const port = await inbound.listen(0, "127.0.0.1");
    const client = createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true });
    send = client.sendMail.bind(client);
  });
  afterAll(() => inbound.close());

  it("records a message once per project, with what it says", async () => {
    const info = await send({
      from: "Ann <ann@customer.test>",
      to: ["help@shop.test", "sales@shop.test"],
      subject: "Hello\r\n there",
      inReplyTo: "<0b6f2a5e-1c1d-4f7e-9a3b-2f1e8d4c5b6a@shop.test>",
      text: "Hi",
    });
    expect(info.response).toMatch(/^250/);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      projectId: "project-a",
      recipient: "help@shop.test",
      message: { sender: "ann@customer.test", subject: "Hello there", answeredIds: ["0b6f2a5e-1c1d-4f7e-9a3b-2f1e8d4c5b6a"] },
    });
  });

  it("refuses a domain no project receives with 550, and one whose DNS is away with 451", async () => {
    expect(await failureOf(send({ from: "ann@customer.test", to: "x@nobody.test", subject: "?", text: "?" }))).toBe(550);
    expect(await failureOf(send({ from: "ann@customer.test", to: "x@dns-down.test", subject: "?", text: "?" }))).toBe(451);
  });

  it("takes at most maxRecipients recipients a message (452 for the rest)", async () => {
    const info = await send({
      from: "ann@customer.test",
      to: ["a@busy.test", "b@shop.test", "c@shop.test", "d@shop.test"],
      subject: "Many",
      text: "Many",
    });
    expect(info.accepted).toHaveLength(3);
    expect(info.rejected).toEqual(["d@shop.test"]);
  });

  it("tells a sender past a project's rate to try later (451)", async () => {
    // busy.test's project took one message above; one more fits in its two a minute, then 451.
    expect((await send({ from: "ann@customer.test", to: "a@busy.test", subject: "2", text: "2" })).response).toMatch(/^250/);
    expect(await failureOf(send({ from: "ann@customer.test", to: "a@busy.test", subject: "3", text: "3" }))).toBe(451);
  });
});
