import { createServer } from "node:net";
import { bareHost } from "./config.js";

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * True for errors meaning "nothing (working) listens there": the signal to start a server.
 * Anything else (wrong password, unknown role) is a real answer from a real server and
 * must surface instead of making us start a second server on an occupied port.
 */
export function isUnreachable(err: unknown): boolean {
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.every(isUnreachable);
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && NETWORK_CODES.has(code)) return true;
  return /connection (terminated|timeout|is closed)|timed? ?out/i.test(err.message);
}

/**
 * Fails when something already listens on host:port. Called after the address did not
 * answer as the expected server, so a listener there is a stranger (or a hung server):
 * better said at once than after the new server fails to bind.
 */
export async function assertPortFree(host: string, port: number, what: string): Promise<void> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: bareHost(host), port, exclusive: true }, resolve);
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") return; // let the server itself report odd cases
    throw new Error(`cannot start ${what}: ${host}:${port} is already in use by another program`, { cause: err });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
