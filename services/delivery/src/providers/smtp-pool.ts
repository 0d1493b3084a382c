import { parseConnectionUrl } from "nodemailer/lib/shared";
import SMTPConnection, { type SMTPConnectionOptions, type SMTPEnvelope } from "nodemailer/lib/smtp-connection";
import type { Lane } from "../domain/lanes.js";

export interface SmtpPoolOptions {
  /** `smtp://user:pass@host:port` (STARTTLS when offered), `smtps://…` (TLS from the first byte); nodemailer's query options (`?requireTLS=true`, `?tls.rejectUnauthorized=false`). */
  url: string;
  maxConnections: number;
  /** Messages one connection sends before it is closed and another opened. */
  maxMessagesPerConnection: number;
  connectionTimeoutMs: number;
  greetingTimeoutMs: number;
  socketTimeoutMs: number;
  /** An unused connection is closed after this long, below the 5 minutes RFC 5321 asks servers to wait. */
  idleTimeoutMs: number;
}

/** What a refused or failed send rejects with: nodemailer's own error (code, responseCode, response, command). */
export type SmtpError = Error & { code?: string; responseCode?: number; response?: string; command?: string };

export interface SmtpPool {
  /**
   * Sends a message that is already built and signed; answers the relay's final reply. Rejects with
   * nodemailer's error, or with a `TimeoutError` when no connection is free within `timeoutMs` or the
   * transmission on it takes longer than `timeoutMs`: at most twice `timeoutMs` in all. A bulk send gets a
   * connection only when no urgent send waits for one.
   */
  send(envelope: SMTPEnvelope, raw: Buffer, timeoutMs: number, lane?: Lane): Promise<string>;
  /** Closes every connection; sends waiting for one fail. */
  close(): void;
}

interface Pooled {
  connection: SMTPConnection;
  messages: number;
  idleTimer: NodeJS.Timeout | undefined;
  /** Out of the pool: an error, a timeout or the connection's own 'end' may each say so, and it counts once. */
  discarded: boolean;
  /** It waited in the pool at some time, where the relay may have closed it unseen, whether or not it had sent yet. */
  wasIdle: boolean;
}

interface Waiter {
  resolve(pooled: Pooled): void;
  reject(error: Error): void;
}

const transientCodes = new Set(["ECONNECTION", "ESOCKET", "ETIMEDOUT"]);

/**
 * Whether a send failed because its connection was gone before the transaction began: the socket closed or broke
 * with no reply, or the first reply (to MAIL FROM) was the 421 of a relay that closed the session meanwhile. A 421
 * after an accepted MAIL FROM is the destination deferring this message, which trying again at once would not change.
 */
const wasGone = (failure: SmtpError): boolean =>
  failure.name !== "TimeoutError" &&
  (failure.responseCode === undefined
    ? transientCodes.has(failure.code ?? "")
    : failure.responseCode === 421 && failure.command === "MAIL FROM");

/**
 * Pooled SMTP connections that carry raw messages, on nodemailer's `SMTPConnection` (the protocol, TLS,
 * STARTTLS, AUTH, PIPELINING). nodemailer's own pool takes a mail object, compiles a MIME node for it even
 * when it is raw, and streams it through `stream.pipeline`, whose end builds a DOMException with its stack:
 * 11 % of the delivery event loop for bytes that were built and signed already. This pool keeps what
 * nodemailer's gives: at most `maxConnections`, reuse, a message limit per connection, a fresh connection
 * after a failure or an idle close, RSET after a refusal, and a message retried on a new connection when
 * a reused one turns out to be gone.
 */
export function createSmtpPool(options: SmtpPoolOptions): SmtpPool {
  const { auth, ...urlOptions } = parseConnectionUrl(options.url);
  const connectionOptions: SMTPConnectionOptions = {
    ...(urlOptions as SMTPConnectionOptions),
    connectionTimeout: options.connectionTimeoutMs,
    greetingTimeout: options.greetingTimeoutMs,
    socketTimeout: options.socketTimeoutMs,
    logger: false,
  };
  const idle: Pooled[] = [];
  const waiting: Record<Lane, Waiter[]> = { urgent: [], bulk: [] };
  const waiters = () => waiting.urgent.length + waiting.bulk.length;
  const nextWaiter = (): Waiter | undefined => waiting.urgent.shift() ?? waiting.bulk.shift();
  let open = 0;
  let opening = 0;
  let closed = false;

  const closedError = () => Object.assign(new Error("the SMTP pool is closed"), { code: "ECONNECTION" });

  function discard(pooled: Pooled, quit: boolean): void {
    if (pooled.discarded) return;
    pooled.discarded = true;
    clearTimeout(pooled.idleTimer);
    const index = idle.indexOf(pooled);
    if (index !== -1) idle.splice(index, 1);
    pooled.connection.removeAllListeners("end");
    if (!pooled.connection.destroyed) {
      if (quit) pooled.connection.quit();
      else pooled.connection.close();
    }
    open--;
    pump();
  }

  function connect(): Promise<Pooled> {
    return new Promise((resolve, reject) => {
      const connection = new SMTPConnection(connectionOptions);
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        connection.close();
        reject(error);
      };
      // Errors outside a send (an idle connection reset) end the connection; its 'end' takes it out of the pool.
      connection.on("error", fail);
      connection.once("end", () => fail(Object.assign(new Error("Connection closed unexpectedly"), { code: "ECONNECTION" })));
      connection.connect((error) => {
        if (error) return fail(error);
        const ready = () => {
          if (settled) return;
          settled = true;
          const pooled: Pooled = { connection, messages: 0, idleTimer: undefined, discarded: false, wasIdle: false };
          connection.removeAllListeners("end");
          connection.once("end", () => discard(pooled, false));
          resolve(pooled);
        };
        if (!auth || !connection.allowsAuth) return ready();
        connection.login(auth, (loginError) => (loginError ? fail(loginError) : ready()));
      });
    });
  }

  /** Hands idle connections to waiting sends, and opens connections for the rest up to the cap. */
  function pump(): void {
    if (closed) return;
    while (waiters() > 0 && idle.length > 0) {
      const pooled = idle.pop() as Pooled;
      clearTimeout(pooled.idleTimer);
      nextWaiter()?.resolve(pooled);
    }
    while (waiters() > opening && open < options.maxConnections) {
      open++;
      opening++;
      connect().then(
        (pooled) => {
          opening--;
          release(pooled);
        },
        (error: Error) => {
          opening--;
          open--;
          // The send that asked for this connection learns why there is none; the others wait for their own.
          nextWaiter()?.reject(error);
          pump();
        },
      );
    }
  }

  function release(pooled: Pooled): void {
    if (pooled.discarded) return;
    if (closed || pooled.connection.destroyed || pooled.messages >= options.maxMessagesPerConnection) {
      discard(pooled, true);
      return;
    }
    const waiter = nextWaiter();
    if (waiter) {
      waiter.resolve(pooled);
      return;
    }
    idle.push(pooled);
    pooled.wasIdle = true;
    pooled.idleTimer = setTimeout(() => discard(pooled, true), options.idleTimeoutMs);
    pooled.idleTimer.unref();
  }

  function acquire(lane: Lane): { connection: Promise<Pooled>; cancel(): void } {
    let waiter: Waiter | undefined;
    const queue = waiting[lane];
    const connection = new Promise<Pooled>((resolve, reject) => {
      if (closed) return reject(closedError());
      waiter = { resolve, reject };
      queue.push(waiter);
      pump();
    });
    return {
      connection,
      cancel() {
        const index = waiter ? queue.indexOf(waiter) : -1;
        if (index !== -1) queue.splice(index, 1);
      },
    };
  }

  /** One attempt on one connection: resolves the final reply, or rejects and leaves the connection reset or discarded. */
  function sendOn(pooled: Pooled, envelope: SMTPEnvelope, raw: Buffer): Promise<string> {
    pooled.messages++;
    return new Promise((resolve, reject) => {
      // SMTPConnection keeps the envelope it is given as its transaction's state and writes to it (accepted, rejected,
      // the recipients still to send): a caller's object used for two sends at once, on two connections, would
      // have one transaction reset the other's accepted recipients ("all recipients were rejected: 354").
      const transaction: SMTPEnvelope = { ...envelope };
      pooled.connection.send(transaction, raw, (error, info) => {
        if (!error) {
          // SMTPConnection is done with the transaction only once this callback has returned and the rest of its reply
          // handling has run: a next send begun sooner can interleave with it (a 354 read as RCPT's reply). nodemailer's
          // own pool waits the same turn.
          setImmediate(() => release(pooled));
          return resolve(info.response);
        }
        const refused = (error.code === "EENVELOPE" || error.code === "EMESSAGE") && error.responseCode !== 421;
        if (refused && !pooled.connection.destroyed) {
          // The relay refused this message, not the session: RSET and keep the connection.
          pooled.connection.reset((resetError) => (resetError ? discard(pooled, false) : release(pooled)));
        } else {
          discard(pooled, false);
        }
        reject(error);
      });
    });
  }

  const timeoutError = (message: string) => Object.assign(new Error(message), { name: "TimeoutError", code: "ETIMEDOUT" });

  /** A connection by the deadline; past it the wait is given up (nothing was sent) and a connection that comes late goes back to the pool. */
  function acquireBy(lane: Lane, deadline: number, timeoutMs: number): Promise<Pooled> {
    const acquired = acquire(lane);
    let late = false;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        late = true;
        acquired.cancel();
        reject(timeoutError(`no SMTP connection was free within ${timeoutMs} ms`));
      }, deadline - Date.now());
      acquired.connection.then(
        (pooled) => {
          clearTimeout(timer);
          if (late) release(pooled);
          else resolve(pooled);
        },
        (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /** One attempt with its own limit: a relay that trickles its replies leaves the session in an unknown state, so the connection is dropped. */
  function sendWithin(pooled: Pooled, envelope: SMTPEnvelope, raw: Buffer, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        discard(pooled, false);
        reject(timeoutError(`the send took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      sendOn(pooled, envelope, raw)
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  }

  async function send(envelope: SMTPEnvelope, raw: Buffer, timeoutMs: number, lane: Lane = "urgent"): Promise<string> {
    // The wait for a connection and the transmission have a limit each: on one budget, a message that waited most of it
    // for a connection would time out while the relay was accepting it, and be sent again (the same Message-ID, twice).
    const connectionDeadline = Date.now() + timeoutMs;
    for (let tries = 1; ; tries++) {
      const pooled = await acquireBy(lane, connectionDeadline, timeoutMs);
      // A connection opened while another served its send waits in the pool unused: the relay may drop it there too.
      const reused = pooled.messages > 0 || pooled.wasIdle;
      try {
        return await sendWithin(pooled, envelope, raw, timeoutMs);
      } catch (error) {
        // A reused connection the relay dropped meanwhile: once more on another (nodemailer's pool requeues it), as often
        // as such connections come up, since a relay that closed one idle connection has often closed all of them.
        if (!(reused && wasGone(error as SmtpError) && tries <= options.maxConnections)) throw error;
      }
    }
  }

  return {
    send,
    close() {
      closed = true;
      for (const waiter of [...waiting.urgent.splice(0), ...waiting.bulk.splice(0)]) waiter.reject(closedError());
      for (const pooled of [...idle]) discard(pooled, true);
    },
  };
}
