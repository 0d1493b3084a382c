export * from "./envelope.js";
export * from "./event-consumer.js";
export * from "./kafka-client.js";
export * from "./outbox.js";
export * from "./outbox-relay.js";
export * from "./project-lifecycle-consumer.js";
export * from "./sql-client.js";
export * from "./topics.js";
