import { Piscina, type TaskQueue } from "piscina";
import type { Lane } from "../domain/lanes.js";
import { type BuildRequest, type BuiltMessage, bufferOf, buildSignedMessage } from "./signed-message.js";

export interface MessageBuilder {
  /** The message built and DKIM-signed, as it goes on the wire; a bulk build waits behind every urgent one queued. */
  build(request: BuildRequest, lane?: Lane): Promise<{ raw: Buffer; envelope: BuiltMessage["envelope"] }>;
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
type QueuedTask = Parameters<TaskQueue["push"]>[0];

/** Piscina's queue of tasks waiting for a thread, urgent ones first (each lane in its order). */
class LaneTaskQueue implements TaskQueue {
  private readonly urgent: QueuedTask[] = [];
  private readonly bulk: QueuedTask[] = [];

  get size(): number {
    return this.urgent.length + this.bulk.length;
  }

  private laneOf(task: QueuedTask): QueuedTask[] {
    const options = task[Piscina.queueOptionsSymbol as keyof QueuedTask] as { lane?: Lane } | null;
    return options?.lane === "bulk" ? this.bulk : this.urgent;
  }

  push(task: QueuedTask): void {
    this.laneOf(task).push(task);
  }

  /** A task piscina could not hand to a thread after all goes back to the head of its lane. */
  unshift(task: QueuedTask): void {
    this.laneOf(task).unshift(task);
  }

  shift(): QueuedTask | null {
    return this.urgent.shift() ?? this.bulk.shift() ?? null;
  }

  remove(task: QueuedTask): void {
    const lane = this.laneOf(task);
    const index = lane.indexOf(task);
    if (index !== -1) lane.splice(index, 1);
  }
}

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
    taskQueue: new LaneTaskQueue(),
  });
  return {
    async build(request, lane = "urgent") {
      // The lane rides on the task for the queue alone: a symbol key is not copied to the thread.
      const task: BuildRequest = Object.assign({ [Piscina.queueOptionsSymbol]: { lane } }, request);
      const { raw, envelope } = await pool.run(task);
      return { raw: bufferOf(raw), envelope };
    },
    close: () => pool.close(),
  };
}
