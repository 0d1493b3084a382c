import type { AddressInfo } from "node:net";
import type { Logger } from "@herald/platform";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import { domainOfAddress, normaliseAddress } from "../domain/email-input.js";
import { createKeyedTokenBuckets } from "../domain/token-bucket.js";
import { InboundCapReached, type ReceivedMail, readReceivedMessage } from "../inbound/received-mail.js";
import type { ReceivingDomains } from "../inbound/receiving-domains.js";
import { type ReceivedReport, readReport } from "./delivery-reports.js";
import type { EmailEventRecorder } from "./email-events.js";
import type { ReturnPaths } from "./return-path.js";

/** The processed_events consumer of reports received over SMTP. */
const consumer = "smtp.report";

export interface InboundSmtp {
  /** Listens; answers the port (0 takes a free one). */
  listen(port: number, host: string): Promise<number>;
  close(): Promise<void>;
}

/** An SMTP reply for smtp-server's callbacks: the code and the text the sender sees. */
const reply = (responseCode: number, message: string) => Object.assign(new Error(message), { responseCode });

/** Mail for projects (docs/api-decisions.md "Receiving mail"): who receives which domain, what is recorded, and the bounds. */
export interface InboundReceiving {
  domains: ReceivingDomains;
  mail: ReceivedMail;
  /** Messages one project may receive a minute (INBOUND_PROJECT_MESSAGES_PER_MINUTE). */
  projectMessagesPerMinute: number;
  /** Recipients one message may have (INBOUND_MAX_RECIPIENTS). */
  maxRecipients: number;
  /** The projects among these that have received their monthly inbound cap's worth (projectsAtInboundCap); unset: none checked at RCPT TO. */
  atInboundCap?: (projectIds: readonly string[]) => Promise<ReadonlySet<string>>;
}

/**
 * Who a connection counts against: an IPv4 address (also when written IPv4-mapped, `::ffff:192.0.2.1`), or the /64 of
 * an IPv6 address, since one host is routinely given a whole /64 and could otherwise open connections from as many
 * addresses as it likes. Anything that is no IPv6 address counts as itself.
 */
export function clientOf(remoteAddress: string): string {
  // The zone of a link-local address (`fe80::1%eth0`) is no part of who the client is.
  const address = remoteAddress.toLowerCase().split("%", 1)[0] ?? "";
  if (!address.includes(":")) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped?.[1]) return mapped[1];
  const [head = "", tail] = address.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailGroups.length)).fill("0"), ...tailGroups];
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

/** A message refused for good once its content is read. */
class RefusedMessage extends Error {}

/**
 * The MX of BOUNCE_DOMAIN: receives the delivery status notifications and feedback reports
 * that receivers send to the return paths of our emails (see return-path.ts), and the reports
 * of feedback loops sent to `fbl@BOUNCE_DOMAIN`. Only those are accepted as recipients (550 for
 * any other: it relays nothing and keeps no mail); each report is recorded on the email its
 * return path, or the return path its returned original quotes, names (EmailEventRecorder), and a
 * message that is no report (an auto-reply) is accepted and dropped. A report that cannot be
 * recorded now (the database is away) answers 451, so that the sender tries again later: an
 * accepted report is never lost.
 *
 * Nobody authenticates here, so memory is bounded three ways (issue 20): at most `maxClients` open connections, of
 * which one client (an address; an IPv6 /64, which one host is given) holds at most `maxConnectionsPerIp` (421 past
 * either), so that one client cannot take the listener from the others (issue 28); messages of at most `maxMessageBytes` (552), and at most
 * `bufferBytes` held for all messages together: a message that would go past it is dropped as it arrives and
 * answered 452, a temporary refusal its sender retries.
 *
 * With `receiving`, it is also the MX of the projects that receive mail: a recipient on a domain a project
 * receives (receiving-domains.ts) is accepted, within the project's rate (451 past it), its monthly inbound cap
 * (452 4.2.2 past it, at RCPT TO, and after DATA for a message that a concurrent one took the last place from) and the
 * recipients a message may have (452 past them), and the message is recorded in each such project (received-mail.ts).
 * Any other recipient is refused with 550. Reports to return paths are handled as before, whatever else a
 * message is addressed to.
 */
export function createInboundSmtp(deps: {
  returnPaths: ReturnPaths;
  events: EmailEventRecorder;
  logger: Logger;
  /** Larger messages are refused (552): reports are small, though some return the whole original. */
  maxMessageBytes: number;
  /** Open connections the listener holds, all clients together (INBOUND_SMTP_MAX_CLIENTS); past them, 421. */
  maxClients: number;
  /** Open connections per client address (clientOf: an IPv6 client's /64), at most maxClients: its share of them. */
  maxConnectionsPerIp: number;
  /** Bytes of messages held in memory at once, all connections together. */
  bufferBytes: number;
  /** Unset: only reports to return paths are accepted. */
  receiving?: InboundReceiving;
}): InboundSmtp {
  const { returnPaths, logger, receiving } = deps;
  const connectionsByIp = new Map<string, number>();
  let bufferedBytes = 0;
  const projectRates = receiving
    ? createKeyedTokenBuckets({ ratePerSecond: receiving.projectMessagesPerMinute / 60, burst: receiving.projectMessagesPerMinute })
    : undefined;
  /** Per session, for its current message: the projects each accepted recipient of a receiving domain goes to. */
  const receivers = new Map<string, Map<string, string[]>>();
  const receiversOf = (session: SMTPServerSession): Map<string, string[]> => {
    let found = receivers.get(session.id);
    if (!found) {
      found = new Map();
      receivers.set(session.id, found);
    }
    return found;
  };

  const isFeedbackAddress = (address: string) => address.trim().toLowerCase() === returnPaths.feedbackAddress;

  /** Whether a recipient is a return path or the feedback address: reports, not mail for a project. */
  const isReportAddress = (address: string) => returnPaths.emailIdOf(address) !== undefined || isFeedbackAddress(address);

  /**
   * The email a report received at this recipient is about: the one its return path names, or for a
   * feedback loop's report to fbl@, the one whose return path the returned original quotes. Either way
   * the tag must verify: knowing an email's id (or its Message-ID, which carries it) is not enough.
   */
  function emailOf(recipient: string, report: ReceivedReport): string | undefined {
    if (!isFeedbackAddress(recipient)) return returnPaths.emailIdOf(recipient);
    if (report.event.type !== "email.complaint") return undefined;
    return report.originalReturnPaths.map(returnPaths.emailIdOf).find((emailId) => emailId !== undefined);
  }

  /** The message's recipients that are projects' addresses, recorded in each of their projects. */
  async function receiveForProjects(raw: Buffer, session: SMTPServerSession): Promise<void> {
    const accepted = receivers.get(session.id);
    if (!receiving || !accepted || accepted.size === 0) return;
    const message = await readReceivedMessage(raw, session.envelope.mailFrom ? session.envelope.mailFrom.address : "");
    if (!message) throw new RefusedMessage("5.1.7 the message has no sender address to reply to");
    // One record per project: a message to two addresses of one project is one message there.
    const recipientOfProject = new Map<string, string>();
    for (const [recipient, projectIds] of accepted) {
      for (const projectId of projectIds) if (!recipientOfProject.has(projectId)) recipientOfProject.set(projectId, recipient);
    }
    const receivedAt = new Date();
    for (const [projectId, recipient] of recipientOfProject) await receiving.mail.record(projectId, recipient, message, receivedAt);
  }

  async function receive(raw: Buffer, session: SMTPServerSession): Promise<void> {
    await receiveForProjects(raw, session);
    if (!session.envelope.rcptTo.some((recipient) => isReportAddress(recipient.address))) return;
    const report = await readReport(raw);
    if (!report) {
      logger.debug({ remote: session.remoteAddress }, "a message to a return path that is no report: dropped");
      return;
    }
    const emailIds = new Set<string>();
    for (const recipient of session.envelope.rcptTo) {
      const emailId = emailOf(recipient.address, report);
      if (emailId) emailIds.add(emailId);
    }
    for (const emailId of emailIds) {
      // One report may name several emails; each records it once, however it was addressed.
      await deps.events.record(consumer, `${report.reportId} ${emailId}`, { ...report.event, emailId });
    }
  }

  /** Sessions counted in connectionsByIp (one refused at connect is not). */
  const counted = new Set<string>();
  const server = new SMTPServer({
    logger: false,
    name: returnPaths.domain,
    banner: "Herald inbound mail",
    // Plain SMTP: reports carry nothing secret, and senders fall back to it when STARTTLS is not offered.
    disabledCommands: ["AUTH", "STARTTLS"],
    disableReverseLookup: true,
    size: deps.maxMessageBytes,
    maxClients: deps.maxClients,
    socketTimeout: 60_000,
    onConnect(session, callback) {
      const client = clientOf(session.remoteAddress);
      const open = connectionsByIp.get(client) ?? 0;
      if (open >= deps.maxConnectionsPerIp) {
        callback(reply(421, "4.7.0 too many connections from your address, try again later"));
        return;
      }
      connectionsByIp.set(client, open + 1);
      counted.add(session.id);
      callback();
    },
    onClose(session) {
      receivers.delete(session.id);
      if (!counted.delete(session.id)) return;
      const client = clientOf(session.remoteAddress);
      const open = (connectionsByIp.get(client) ?? 1) - 1;
      if (open > 0) connectionsByIp.set(client, open);
      else connectionsByIp.delete(client);
    },
    onMailFrom(_address, session, callback) {
      // A new message in the session: the recipients of the last one are forgotten.
      receivers.delete(session.id);
      callback();
    },
    onRcptTo(address, session, callback) {
      if (receiving && session.envelope.rcptTo.length >= receiving.maxRecipients) {
        callback(reply(452, `4.5.3 too many recipients: at most ${receiving.maxRecipients} a message`));
        return;
      }
      if (isReportAddress(address.address)) {
        callback();
        return;
      }
      const domain = domainOfAddress(address.address);
      if (!receiving || domain === "" || domain === returnPaths.domain) {
        callback(reply(550, `5.1.1 <${address.address}>: no such mailbox here`));
        return;
      }
      const decide = async () => {
        const answer = await receiving.domains.projectsFor(domain);
        // A project past its monthly inbound cap refuses for now (mailbox full), so that the sender retries rather than losing it.
        const full: ReadonlySet<string> =
          answer.kind === "receive" && receiving.atInboundCap ? await receiving.atInboundCap(answer.projectIds) : new Set();
        return { answer, full };
      };
      decide().then(
        ({ answer, full }) => {
          if (answer.kind === "unknown") {
            callback(reply(451, `4.4.3 cannot tell now whether ${domain} receives mail here, try again later`));
            return;
          }
          if (answer.kind === "none") {
            callback(reply(550, `5.7.1 <${address.address}>: this server does not receive mail for ${domain}`));
            return;
          }
          if (full.size > 0) {
            callback(reply(452, `4.2.2 <${address.address}>: the mailbox has received all the mail it may this month, try again later`));
            return;
          }
          const accepted = receiversOf(session);
          // Each project counts the message once, however many of its addresses it is sent to.
          const alreadyCounted = new Set([...accepted.values()].flat());
          const fresh = answer.projectIds.filter((projectId) => !alreadyCounted.has(projectId));
          const granted = fresh.filter((projectId) => projectRates?.bucket(projectId).take(1) === 1);
          if (granted.length < fresh.length) {
            for (const projectId of granted) projectRates?.bucket(projectId).refund(1);
            callback(reply(451, `4.7.1 too much mail for ${domain} right now, try again later`));
            return;
          }
          accepted.set(normaliseAddress(address.address), answer.projectIds);
          callback();
        },
        (error: unknown) => {
          logger.warn({ err: error, domain }, "cannot tell which project receives a domain");
          callback(reply(451, "4.3.0 cannot accept mail now, try again later"));
        },
      );
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      // smtp-server only flags a message past `size`: it keeps the bytes coming, so they are counted and dropped here.
      const chunks: Buffer[] = [];
      let bytes = 0;
      let held = 0;
      let overBudget = false;
      let answered = false;
      const release = () => {
        bufferedBytes -= held;
        held = 0;
        chunks.length = 0;
      };
      const answer = (...args: Parameters<typeof callback>) => {
        if (answered) return;
        answered = true;
        callback(...args);
      };
      stream.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > deps.maxMessageBytes || overBudget) return release();
        if (bufferedBytes + chunk.length > deps.bufferBytes) {
          overBudget = true;
          return release();
        }
        bufferedBytes += chunk.length;
        held += chunk.length;
        chunks.push(chunk);
      });
      stream.on("error", (error: Error) => {
        release();
        answer(error);
      });
      stream.on("end", () => {
        if (stream.sizeExceeded || bytes > deps.maxMessageBytes) {
          release();
          answer(reply(552, `5.3.4 message larger than ${deps.maxMessageBytes} bytes`));
          return;
        }
        if (overBudget) {
          logger.warn({ remote: session.remoteAddress, bufferBytes: deps.bufferBytes }, "inbound SMTP buffer full: a report is deferred");
          answer(reply(452, "4.3.1 too many messages in progress, try again later"));
          return;
        }
        // The message's bytes stay counted until it is recorded.
        const raw = Buffer.concat(chunks);
        chunks.length = 0;
        receive(raw, session)
          .finally(release)
          .then(
            () => answer(null, "2.0.0 message received"),
            (error: unknown) => {
              if (error instanceof RefusedMessage) {
                answer(reply(550, error.message));
                return;
              }
              if (error instanceof InboundCapReached) {
                answer(reply(452, "4.2.2 the mailbox has received all the mail it may this month, try again later"));
                return;
              }
              logger.warn({ err: error, remote: session.remoteAddress }, "a message could not be recorded: the sender will retry");
              answer(reply(451, "4.3.0 cannot record the message now, try again later"));
            },
          );
      });
    },
  });
  server.on("error", (error) => logger.warn({ err: error }, "inbound SMTP connection error"));

  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.server.once("error", reject);
        server.listen(port, host, () => {
          server.server.off("error", reject);
          resolve((server.server.address() as AddressInfo).port);
        });
      });
    },
    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
