import { Piscina } from "piscina";
import { type BuildRequest, type BuiltMessage, bufferOf, buildSignedMessage } from "./signed-message.js";

export interface MessageBuilder {
  /** The message built and DKIM-signed, as it goes on the wire. */
  build(request: BuildRequest): Promise<{ raw: Buffer; envelope: BuiltMessage["envelope"] }>;
  /** Lets the builds under way finish, then stops the threads. */
  close(): Promise<void>;
}

// Compiled, the entry is the .js beside this file; in the tests, which run the sources, the .ts itself.
const threadEntry = new URL(import.meta.url.endsWith(".ts") ? "./signed-message.ts" : "./signed-message.js", import.meta.url);

/**
 * Where messages are built and signed: `threads` worker threads (piscina), or with 0 the calling
 * thread. 1 to 3 ms of CPU a message by machine, most of the delivery process's work: on the event loop it
 * bounds one process to what one core can build, and it delays everything else the loop does (SMTP
 * replies, the queue's statements, RPCs). The DKIM key crosses to a thread as a KeyObject, so that no
 * thread parses its PEM again.
 */
export function createMessageBuilder(threads: number): MessageBuilder {
  if (threads === 0) {
    return {
      async build(request) {
        const { raw, envelope } = await buildSignedMessage(request);
        return { raw: bufferOf(raw), envelope };
      },
      async close() {},
    };
  }
  const pool = new Piscina<BuildRequest, BuiltMessage>({
    filename: threadEntry.href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.POSITIVE_INFINITY,
    // A build waits on stream callbacks: the threads keep their event loops running between tasks.
    atomics: "async",
    concurrentTasksPerWorker: 16,
  });
  return {
    async build(request) {
      const { raw, envelope } = await pool.run(request);
      return { raw: bufferOf(raw), envelope };
    },
    close: () => pool.close(),
  };
}
