export * from "./dns-server.js";
export * from "./expect-failure.js";
export * from "./fake-http-server.js";
export * from "./kafka.js";
export * from "./redis.js";
export * from "./service-process.js";
export * from "./stack.js";
export * from "./test-database.js";
