export * from "./connect-error.js";
export * from "./domain-error.js";
export * from "./http-envelope.js";
