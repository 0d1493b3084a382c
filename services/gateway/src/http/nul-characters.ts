import type { FastifyInstance } from "fastify";
import { HttpProblem } from "./errors.js";

/**
 * Where in a parsed request part a string or a key holds NUL (U+0000): its dotted path ("" for the
 * part itself), or undefined when none does. Walked with a stack, so that no nesting depth overflows it.
 */
export function pathOfNul(value: unknown): string | undefined {
  const pending: Array<{ node: unknown; path: string }> = [{ node: value, path: "" }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, path } = next;
    if (typeof node === "string") {
      if (node.includes("\0")) return path;
    } else if (Array.isArray(node)) {
      node.forEach((item, index) => {
        pending.push({ node: item, path: `${path}[${index}]` });
      });
    } else if (node !== null && typeof node === "object") {
      for (const [key, item] of Object.entries(node)) {
        const at = path === "" ? key : `${path}.${key}`;
        if (key.includes("\0")) return at;
        pending.push({ node: item, path: at });
      }
    }
  }
  return undefined;
}

/**
 * PostgreSQL stores no NUL in text or jsonb: a request carrying one anywhere (body, query, path) is refused
 * here, naming where, instead of failing as a 500 wherever the services would write it. A body answers 422
 * as any invalid field does; a query or path parameter 400, as other bad parameters do.
 */
export function registerNulRefusal(app: FastifyInstance): void {
  app.addHook("preValidation", async (request) => {
    for (const parameters of [request.params, request.query]) {
      const at = pathOfNul(parameters);
      if (at !== undefined)
        throw new HttpProblem({ statusCode: 400, code: "BAD_REQUEST", message: `${at} must not contain a NUL character` });
    }
    const at = pathOfNul(request.body);
    if (at !== undefined) {
      throw new HttpProblem({
        statusCode: 422,
        code: "VALIDATION_ERROR",
        message: "Request validation failed",
        errors: [{ field: at === "" ? "body" : at, message: "must not contain a NUL character (U+0000)", code: "invalid_string" }],
      });
    }
  });
}
