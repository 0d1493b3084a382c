import type { FastifyInstance } from "fastify";
import { HttpProblem } from "./errors.js";

/**
 * How deep a request body may nest objects and arrays. Free-form JSON (contact and event data, template variables)
 * crosses to the services as google.protobuf.Struct, two or three messages per level, and protobuf decoders stop at
 * 100 nested messages: a `data` nested 51 levels deep failed inside the service and answered 500. No body of the API
 * needs more than a dozen levels.
 */
export const maxBodyDepth = 32;

/** The top-level property under which the value nests deeper than maxBodyDepth ("" for the value itself), walked without recursion. */
export function nestedTooDeepUnder(value: unknown): string | undefined {
  const pending: Array<{ node: unknown; top: string; depth: number }> = [{ node: value, top: "", depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, top, depth } = next;
    if (node === null || typeof node !== "object") continue;
    if (depth >= maxBodyDepth) return top;
    for (const [key, item] of Object.entries(node))
      pending.push({ node: item, top: depth === 0 && !Array.isArray(node) ? key : top, depth: depth + 1 });
  }
  return undefined;
}

/** The answer to a body nested too deep: 422, naming the top-level property. */
export const nestedTooDeep = (field: string) =>
  new HttpProblem({
    statusCode: 422,
    code: "VALIDATION_ERROR",
    message: "Request validation failed",
    errors: [
      { field: field || "body", message: `must not nest objects and arrays more than ${maxBodyDepth} levels deep`, code: "too_big" },
    ],
  });

/** Refuses, before validation, a body nested deeper than maxBodyDepth. */
export function registerDepthRefusal(app: FastifyInstance): void {
  app.addHook("preValidation", async (request) => {
    const field = nestedTooDeepUnder(request.body);
    if (field !== undefined) throw nestedTooDeep(field);
  });
}
