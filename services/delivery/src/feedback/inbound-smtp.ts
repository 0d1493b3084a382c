import type { AddressInfo } from "node:net";
import type { Logger } from "@herald/platform";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
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
 * Nobody authenticates here, so memory is bounded three ways (issue 20): at most `maxConnectionsPerIp` open
 * connections per client address (421 past it), messages of at most `maxMessageBytes` (552), and at most
 * `bufferBytes` held for all messages together: a message that would go past it is dropped as it arrives and
 * answered 452, a temporary refusal its sender retries.
 */
export function createInboundSmtp(deps: {
  returnPaths: ReturnPaths;
  events: EmailEventRecorder;
  logger: Logger;
  /** Larger messages are refused (552): reports are small, though some return the whole original. */
  maxMessageBytes: number;
  /** Open connections per client address. */
  maxConnectionsPerIp: number;
  /** Bytes of messages held in memory at once, all connections together. */
  bufferBytes: number;
}): InboundSmtp {
  const { returnPaths, logger } = deps;
  const connectionsByIp = new Map<string, number>();
  let bufferedBytes = 0;

  const isFeedbackAddress = (address: string) => address.trim().toLowerCase() === returnPaths.feedbackAddress;

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

  async function receive(raw: Buffer, session: SMTPServerSession): Promise<void> {
    const report = await readReport(raw);
    if (!report) {
      logger.debug({ remote: session.remoteAddress }, "a message that is no report: dropped");
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
    banner: "Herald bounce processing",
    // Plain SMTP: reports carry nothing secret, and senders fall back to it when STARTTLS is not offered.
    disabledCommands: ["AUTH", "STARTTLS"],
    disableReverseLookup: true,
    size: deps.maxMessageBytes,
    maxClients: 200,
    socketTimeout: 60_000,
    onConnect(session, callback) {
      const open = connectionsByIp.get(session.remoteAddress) ?? 0;
      if (open >= deps.maxConnectionsPerIp) {
        callback(reply(421, "4.7.0 too many connections from your address, try again later"));
        return;
      }
      connectionsByIp.set(session.remoteAddress, open + 1);
      counted.add(session.id);
      callback();
    },
    onClose(session) {
      if (!counted.delete(session.id)) return;
      const open = (connectionsByIp.get(session.remoteAddress) ?? 1) - 1;
      if (open > 0) connectionsByIp.set(session.remoteAddress, open);
      else connectionsByIp.delete(session.remoteAddress);
    },
    onRcptTo(address, _session, callback) {
      if (returnPaths.emailIdOf(address.address) || isFeedbackAddress(address.address)) callback();
      else callback(reply(550, `5.1.1 <${address.address}>: no such mailbox here`));
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
            () => answer(null, "2.0.0 report received"),
            (error: unknown) => {
              logger.warn({ err: error, remote: session.remoteAddress }, "a report could not be recorded: the sender will retry");
              answer(reply(451, "4.3.0 cannot record the report now, try again later"));
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
