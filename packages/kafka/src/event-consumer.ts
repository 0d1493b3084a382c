import { type BackgroundLoop, createBackgroundLoop } from "@herald/platform";
import { type Context, context, propagation, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import type { Consumer, IHeaders, Kafka, TopicPartitionOffsetAndMetadata } from "kafkajs";
import type { Logger } from "pino";
import { decodeEnvelope, type EventEnvelope } from "./envelope.js";
import type { SqlClient, TransactionalClient } from "./sql-client.js";

export interface EventConsumer {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The trace context a producer put in a message's headers (the outbox relay writes it). */
export const traceContextOf = (headers: IHeaders | undefined): Context => propagation.extract(ROOT_CONTEXT, headerValues(headers));

function headerValues(headers: IHeaders | undefined): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) values[key] = first.toString();
  }
  return values;
}

/**
 * Consumes herald events at least once and applies each at most once: the event id
 * is recorded in processed_events in the same transaction as the handler's writes,
 * so a redelivered event finds its id and is skipped. The events of a Kafka batch are
 * applied in order, up to eventsPerTransaction to a transaction; a handler that throws
 * rolls its chunk back and the batch is delivered again from there. A message that is
 * not an envelope is logged and skipped rather than blocking its partition.
 *
 * A consumer gives either `handle`, called once per event, or `handleChunk`, called
 * once per transaction with the chunk's events not applied before (in order): the
 * latter lets a consumer that only adds up counters write a chunk in a few statements.
 *
 * `accepts`, when given, is asked first about every event, outside any transaction: an
 * event it refuses is passed over with no transaction and no processed_events row. It
 * suits a consumer that acts on few of the events it reads (the automation service's
 * triggers, most tracked events matching no workflow), provided that applying a refused
 * event would have changed nothing: a redelivered event is asked again, so one refused
 * at first and accepted on its redelivery is applied then, once.
 */
export function createEventConsumer<Tx extends SqlClient>(
  options: {
    kafka: Kafka;
    groupId: string;
    topics: string[];
    db: TransactionalClient<Tx>;
    logger: Logger;
    fromBeginning?: boolean;
    /**
     * How long the broker may hold a fetch to fill it (up to 64 KiB): a consumer that can
     * lag a little (metering) applies fewer, larger chunks. Unset: a fetch answers as soon
     * as there is one event.
     */
    batchWindowMs?: number;
    /** Whether the event is worth applying at all; refused ones are passed over without a write. */
    accepts?: (event: EventEnvelope) => boolean | Promise<boolean>;
  } & ({ handle: (event: EventEnvelope, tx: Tx) => Promise<void> } | { handleChunk: (events: EventEnvelope[], tx: Tx) => Promise<void> }),
): EventConsumer {
  const { db, groupId, logger } = options;
  const tracer = trace.getTracer("herald-kafka");

  /** Applies an event inside the caller's transaction, unless this consumer applied it before. */
  async function applyIn(tx: Tx, event: EventEnvelope, handle: (event: EventEnvelope, tx: Tx) => Promise<void>): Promise<void> {
    const inserted = await tx.$executeRaw`
      INSERT INTO processed_events (consumer, event_id) VALUES (${groupId}, ${event.eventId})
      ON CONFLICT DO NOTHING`;
    if (inserted === 0) return;
    await handle(event, tx);
  }

  /** Applies a chunk inside the caller's transaction: one statement records the ids, and only the new events are handled. */
  async function applyChunkIn(
    tx: Tx,
    events: EventEnvelope[],
    handleChunk: (events: EventEnvelope[], tx: Tx) => Promise<void>,
  ): Promise<void> {
    const recorded = await tx.$queryRaw<Array<{ event_id: string }>>`
      INSERT INTO processed_events (consumer, event_id)
      SELECT ${groupId}, event_id FROM unnest(${events.map((event) => event.eventId)}::text[]) AS ids(event_id)
      ON CONFLICT DO NOTHING
      RETURNING event_id`;
    const fresh = new Set(recorded.map((row) => row.event_id));
    // An id twice in one chunk is recorded once: only its first event is applied.
    const applied = events.filter((event) => fresh.delete(event.eventId));
    if (applied.length > 0) await handleChunk(applied, tx);
  }

  async function applyChunk(tx: Tx, batchTopic: string, chunk: Array<{ event: EventEnvelope; parent: Context }>): Promise<void> {
    if ("handleChunk" in options) {
      const { handleChunk } = options;
      await tracer.startActiveSpan(
        `${batchTopic} process`,
        {
          kind: SpanKind.CONSUMER,
          attributes: { "messaging.system": "kafka", "messaging.batch.message_count": chunk.length },
          links: chunk.flatMap(({ parent }) => {
            const spanContext = trace.getSpanContext(parent);
            return spanContext ? [{ context: spanContext }] : [];
          }),
        },
        async (span) => {
          try {
            await applyChunkIn(
              tx,
              chunk.map(({ event }) => event),
              handleChunk,
            );
          } finally {
            span.end();
          }
        },
      );
      return;
    }
    const { handle } = options;
    for (const { event, parent } of chunk) {
      await context.with(parent, () =>
        tracer.startActiveSpan(
          `${batchTopic} process`,
          { kind: SpanKind.CONSUMER, attributes: { "messaging.system": "kafka" } },
          async (span) => {
            try {
              await applyIn(tx, event, handle);
            } finally {
              span.end();
            }
          },
        ),
      );
    }
  }

  async function run(consumer: Consumer): Promise<void> {
    const commits = pacedCommits(consumer, { logger, groupId });
    await consumer.connect();
    await consumer.subscribe({ topics: options.topics, fromBeginning: options.fromBeginning ?? false });
    await consumer.run({
      eachBatchAutoResolve: false,
      autoCommit: false,
      // A batch's events are applied in transactions of up to eventsPerTransaction, in order: one
      // BEGIN and COMMIT per chunk instead of per event is what lets a busy topic keep up.
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        const pending: Array<{ event: EventEnvelope; parent: Context }> = [];
        // The last message read: every message up to it is in pending, applied, or passed over.
        let through: string | undefined;
        let unresolved = 0;
        const settle = async () => {
          if (pending.length > 0) {
            await db.$transaction((tx) => applyChunk(tx, batch.topic, pending), { maxWait: 10_000, timeout: 120_000 });
            pending.length = 0;
          }
          if (through === undefined) return;
          resolveOffset(through);
          commits.consumed(batch.topic, batch.partition, through);
          unresolved = 0;
          await heartbeat();
        };
        for (const message of batch.messages) {
          if (!isRunning() || isStale()) break;
          through = message.offset;
          unresolved++;
          const event = message.value ? decodedOrSkipped(message.value, batch.topic, message.offset) : undefined;
          if (event && (options.accepts === undefined || (await options.accepts(event)))) {
            pending.push({ event, parent: traceContextOf(message.headers) });
          }
          if (pending.length >= eventsPerTransaction || unresolved >= messagesPerSettle) await settle();
        }
        await settle();
      },
    });
  }

  /** The message's envelope; a message that is not one is logged and passed over rather than blocking its partition. */
  function decodedOrSkipped(value: Buffer, topic: string, offset: string): EventEnvelope | undefined {
    try {
      return decodeEnvelope(value);
    } catch (error) {
      logger.warn({ err: error, topic, offset }, "skipping a message that is not an event envelope");
      return undefined;
    }
  }

  return managedConsumer({
    create: () =>
      options.kafka.consumer({
        groupId,
        retry: { retries: 10 },
        ...(options.batchWindowMs === undefined ? {} : { minBytes: 64 * 1024, maxWaitTimeInMs: options.batchWindowMs }),
      }),
    run,
    logger,
    groupId,
    what: "event consumer",
  });
}

/** How often a consumer commits its offsets at most (pacedCommits). */
export const commitIntervalMs = 1_000;

export interface PacedCommits {
  /** The message at `offset` of the partition is applied or passed over: the next commit moves the group past it. */
  consumed(topic: string, partition: number, offset: string): void;
  /** Commits what is consumed and not yet committed, now: before the consumer disconnects. */
  flush(): Promise<void>;
}

/** The paced commits of each running consumer, which managedConsumer flushes before the consumer disconnects. */
const pacedCommitsOf = new WeakMap<Consumer, PacedCommits>();

/**
 * A consumer's offsets committed at most once every commitIntervalMs (and when it disconnects), for a consumer run
 * with `autoCommit: false`. KafkaJS's autoCommit commits after every batch, and with the few events a busy topic's
 * batches carry that was 2.4 offset commits an email over the stack, each a request the broker appends to its
 * offsets log (docs/benchmarks.md, 2026-11-30 evening). The cost: after a crash or a rebalance, up to a second of
 * events is read again, which the consumers already allow for (applied at most once through processed_events, or
 * asked about again by `accepts`). A partition no longer assigned after a rebalance is not committed for.
 */
export function pacedCommits(consumer: Consumer, context: { logger: Logger; groupId: string }): PacedCommits {
  const pending = new Map<string, TopicPartitionOffsetAndMetadata>();
  let timer: NodeJS.Timeout | undefined;
  let committing: Promise<void> = Promise.resolve();

  const commit = async () => {
    clearTimeout(timer);
    timer = undefined;
    const offsets = [...pending.values()];
    if (offsets.length === 0) return;
    try {
      await consumer.commitOffsets(offsets);
      for (const offset of offsets) {
        const key = `${offset.topic} ${offset.partition}`;
        if (pending.get(key) === offset) pending.delete(key);
      }
    } catch (error) {
      // A rebalance under way, or the broker out of reach: the offsets go with the next commit.
      context.logger.warn(
        { err: error, groupId: context.groupId },
        "could not commit the consumer's offsets; they go with the next commit",
      );
      schedule();
    }
  };
  const flush = () => {
    committing = committing.then(commit);
    return committing;
  };
  function schedule() {
    timer ??= setTimeout(() => void flush(), commitIntervalMs);
  }

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    for (const [key, offset] of pending) {
      if (!payload.memberAssignment[offset.topic]?.includes(offset.partition)) pending.delete(key);
    }
  });
  const paced: PacedCommits = {
    consumed(topic, partition, offset) {
      // A group's committed offset is the next message to read.
      pending.set(`${topic} ${partition}`, { topic, partition, offset: (BigInt(offset) + 1n).toString() });
      schedule();
    },
    flush,
  };
  pacedCommitsOf.set(consumer, paced);
  return paced;
}

const startTimeoutMs = 60_000;

/** The wait before a consumer that stopped after a crash starts again: doubled for each crash since it last joined its group. */
const restartDelayMs = { first: 1_000, max: 30_000 };

/** Events applied in one transaction at most. */
const eventsPerTransaction = 200;

/** Messages read (applied or passed over) between two offset resolutions and heartbeats at most. */
const messagesPerSettle = 1_000;

/**
 * The life of a consumer: `create` makes it and `run` connects, subscribes and runs it.
 * start() retries for up to a minute while the broker answers with retriable errors (a
 * broker that has just started, or just created the topics or its group coordinator, does
 * so for a few seconds), dropping the half-started consumer each time; a crash is logged.
 * With `startTimeoutMs: Infinity` it retries whatever the error until the consumer runs,
 * less often after the first few seconds, for a consumer the process serves without.
 *
 * KafkaJS restarts a crashed consumer only after a retriable error. After any other it
 * leaves the consumer stopped, and the service would read nothing more while it looked
 * healthy: a group coordinator not found, for one, which a broker answers while it still
 * loads its offsets topic (tulios/kafkajs#1630), and which joining the group reports as a
 * crash rather than by failing run(). Such a consumer is dropped and a new one started,
 * after a wait that doubles while the crashes repeat, for as long as the service runs.
 */
export function managedConsumer(options: {
  create: () => Consumer;
  run: (consumer: Consumer) => Promise<void>;
  logger: Logger;
  groupId: string;
  /** Names the consumer in the log. */
  what: string;
  /** How long start() retries before it fails; a minute unless given. */
  startTimeoutMs?: number;
}): EventConsumer {
  const { logger, groupId, what } = options;
  let consumer: Consumer | undefined;
  /** Disconnects a consumer, its paced commits (if any) made first, while it still runs. */
  const disconnect = async (running: Consumer) => {
    await pacedCommitsOf.get(running)?.flush();
    await running.disconnect();
  };
  const drop = async () => {
    if (consumer) await disconnect(consumer).catch(() => {});
    consumer = undefined;
  };
  let starting: BackgroundLoop | undefined;
  let stopped = false;
  let crashesSinceJoin = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;

  /** Runs a new consumer; a start with a deadline fails after it, or at once on an error that is not retriable. */
  function startLoop(deadline: number): BackgroundLoop {
    const patient = deadline === Number.POSITIVE_INFINITY;
    const loop = createBackgroundLoop({
      name: `${what} (${groupId}) start`,
      logger,
      idleMs: 250,
      maxBackoffMs: patient ? 15_000 : 2_000,
      logEveryFailures: patient ? 10 : 1,
      ...(patient ? {} : { isFatal: (error: unknown) => !isRetriable(error) || Date.now() > deadline }),
      pass: async () => {
        const created = options.create();
        consumer = created;
        created.on(created.events.GROUP_JOIN, () => {
          crashesSinceJoin = 0;
        });
        created.on(created.events.CRASH, ({ payload }) => {
          logger.error({ err: payload.error, groupId, restarting: payload.restart }, `${what} crashed`);
          if (!payload.restart && consumer === created) scheduleRestart();
        });
        try {
          await options.run(created);
          return "done" as const;
        } catch (error) {
          await drop();
          throw error;
        }
      },
    });
    loop.start();
    return loop;
  }

  function scheduleRestart() {
    if (stopped || restartTimer) return;
    const delayMs = Math.min(restartDelayMs.max, restartDelayMs.first * 2 ** crashesSinceJoin);
    crashesSinceJoin += 1;
    logger.warn({ groupId, delayMs }, `${what} starts again after a crash KafkaJS does not restart from`);
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      restarting = (async () => {
        await starting?.finished.catch(() => {});
        await drop();
        if (!stopped) starting = startLoop(Number.POSITIVE_INFINITY);
      })();
    }, delayMs);
  }

  return {
    async start() {
      starting = startLoop(Date.now() + (options.startTimeoutMs ?? startTimeoutMs));
      await starting.finished;
    },
    async stop() {
      stopped = true;
      clearTimeout(restartTimer);
      await starting?.stop();
      await restarting; // it sees `stopped` once the loop it waits for has ended, and starts no other
      if (consumer) await disconnect(consumer);
      consumer = undefined;
    },
  };
}

/** KafkaJS marks what may pass by retrying; a wrapped cause counts too (retries exhausted). */
function isRetriable(error: unknown): boolean {
  const candidate = error as { retriable?: boolean; originalError?: { retriable?: boolean } } | undefined;
  return candidate?.retriable === true || candidate?.originalError?.retriable === true;
}
