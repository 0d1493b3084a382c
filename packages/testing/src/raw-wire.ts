import { connect } from "node:net";

/** One step of a raw exchange: bytes to write, or a pause (ms) before the next step. */
export type RawStep = string | Buffer | { pauseMs: number };

/**
 * Connects to host:port over plain TCP, writes the steps in order, waits up to `waitMs` for the server to answer or
 * close, then closes: whatever a client could send, without a library that would refuse to send it. Resolves with the
 * bytes received; a connection the server resets is no failure (bad bytes may well be answered that way).
 */
export function rawExchange(
  host: string,
  port: number,
  steps: RawStep[],
  /** `greeting`: write nothing before the server's first bytes (an SMTP server refuses a client that talks first). */
  options: { waitMs?: number; greeting?: boolean } = {},
): Promise<Buffer> {
  const waitMs = options.waitMs ?? 1_000;
  return new Promise((resolve, reject) => {
    const received: Buffer[] = [];
    let closed = false;
    const socket = connect(port, host);
    const finish = () => {
      socket.destroy();
      resolve(Buffer.concat(received));
    };
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED") reject(new Error(`nothing listens on ${host}:${port}`));
      else finish();
    });
    socket.on("close", () => {
      closed = true;
      finish();
    });
    const greeted = new Promise<void>((resolve) => {
      if (!options.greeting) return resolve();
      socket.once("data", () => resolve());
      setTimeout(resolve, 30_000).unref();
    });
    socket.once("connect", async () => {
      await greeted;
      for (const step of steps) {
        if (closed) return;
        if (typeof step === "object" && !Buffer.isBuffer(step)) {
          await new Promise((wake) => setTimeout(wake, step.pauseMs));
          continue;
        }
        await new Promise<void>((written) => socket.write(step, () => written()));
      }
      setTimeout(finish, waitMs);
    });
  });
}

/** The steps that send the bytes one at a time, `pauseMs` apart: a slow client. */
export const byteAtATime = (bytes: string | Buffer, pauseMs = 20): RawStep[] =>
  [...Buffer.from(bytes)].flatMap((byte) => [Buffer.from([byte]), { pauseMs }]);

/** The status line of an HTTP/1.1 answer ("" when none came). */
export const statusLineOf = (answer: Buffer): string => {
  const text = answer.toString("latin1");
  const end = text.indexOf("\r\n");
  return end === -1 ? "" : text.slice(0, end);
};

/** The client connection preface of HTTP/2 (RFC 9113 section 3.4). */
export const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/** HTTP/2 frame types (RFC 9113 section 6). */
export const frameType = { data: 0, headers: 1, rstStream: 3, settings: 4, ping: 6, goaway: 7, windowUpdate: 8, continuation: 9 } as const;

/** One HTTP/2 frame: any type, flags, stream and payload, however wrong. `length` overrides the payload's own. */
export function http2Frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
  length = payload.length,
): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(length, 0, 3);
  header.writeUInt8(type, 3);
  header.writeUInt8(flags, 4);
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK integer with an n-bit prefix (RFC 7541 section 5.1); the prefix's other bits are 0. */
function hpackInteger(value: number, prefixBits: number): Buffer {
  const limit = 2 ** prefixBits - 1;
  if (value < limit) return Buffer.from([value]);
  const bytes = [limit];
  let rest = value - limit;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

const hpackString = (text: string) => Buffer.concat([hpackInteger(Buffer.byteLength(text), 7), Buffer.from(text)]);

/**
 * A header block of literal fields without indexing (RFC 7541 section 6.2.2), in the order given: duplicates,
 * pseudo-headers out of place and values no library would send all go as they are.
 */
export const hpackBlock = (fields: Array<[string, string]>): Buffer =>
  Buffer.concat(fields.flatMap(([name, value]) => [Buffer.from([0]), hpackString(name), hpackString(value)]));
