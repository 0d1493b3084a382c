import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { decodeEnvelope, type EventEnvelope, payloadOf } from "@herald/kafka";

export interface PublishedEvent<Desc extends DescMessage> {
  envelope: EventEnvelope;
  /** The event's own message, undefined when the envelope holds another type. */
  payload: MessageShape<Desc> | undefined;
  topic: string;
  key: string;
}

/** Outbox rows (oldest first) decoded as the relay would publish them, those of one project only. */
export function publishedEvents<Desc extends DescMessage>(
  rows: ReadonlyArray<{ payload: Uint8Array; topic: string; key: string }>,
  projectId: string,
  schema: Desc,
): PublishedEvent<Desc>[] {
  return rows
    .map((row) => {
      const envelope = decodeEnvelope(row.payload);
      return { envelope, payload: payloadOf(envelope, schema), topic: row.topic, key: row.key };
    })
    .filter((event) => event.envelope.projectId === projectId);
}

/** Polls until the check answers something truthy, for work a service does in the background. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
