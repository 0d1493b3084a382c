import { ConnectError } from "@connectrpc/connect";
import { connectErrorToHttp, defaultCodeOfStatus, errorEnvelope, type FieldViolation, type HttpError } from "@herald/errors";
import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";

/** A REST-level error raised by the gateway itself (auth, body shape, limits). */
export class HttpProblem extends Error {
  readonly statusCode: number;

  constructor(readonly problem: HttpError) {
    super(problem.message);
    this.statusCode = problem.statusCode;
  }
}

type ValidationIssue = NonNullable<FastifyError["validation"]>[number];

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const part of pointer.split("/").slice(1)) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part.replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return node;
}

/** The most violations one answer lists. */
const maxViolations = 100;

/** The longest `received` an error echoes, in characters of JSON. */
const receivedMaxLength = 200;

/**
 * The offending value as JSON, cut after its first 200 characters (then ending in `…`): a 40 MB string is not echoed
 * back whole, and 100,000 nested arrays, on which JSON.stringify overflows the stack, are written only as deep as shown.
 */
export function receivedOf(value: unknown): string {
  let text = "";
  const full = () => text.length > receivedMaxLength;
  const write = (node: unknown, depth: number): void => {
    if (node === null || typeof node !== "object") {
      text += JSON.stringify(typeof node === "string" ? node.slice(0, receivedMaxLength + 1) : node) ?? "null";
    } else if (depth >= 16) {
      text += Array.isArray(node) ? "[…]" : "{…}";
    } else if (Array.isArray(node)) {
      text += "[";
      for (let index = 0; index < node.length && !full(); index++) {
        if (index > 0) text += ",";
        write(node[index], depth + 1);
      }
      text += "]";
    } else {
      text += "{";
      let first = true;
      for (const key in node) {
        if (full()) break;
        if (!Object.hasOwn(node, key)) continue;
        text += `${first ? "" : ","}${JSON.stringify(key.slice(0, receivedMaxLength + 1))}:`;
        first = false;
        write((node as Record<string, unknown>)[key], depth + 1);
      }
      text += "}";
    }
  };
  write(value, 0);
  return full() ? `${text.slice(0, receivedMaxLength)}…` : text;
}

/** One errors[] item per schema violation: dotted field path, what is wrong, the ajv keyword, and what was sent. */
function fieldViolationOf(issue: ValidationIssue, input: unknown, context: string | undefined): FieldViolation {
  const missing = issue.params.missingProperty;
  const path = [issue.instancePath.replace(/^\//, "").replaceAll("/", "."), typeof missing === "string" ? missing : ""]
    .filter(Boolean)
    .join(".");
  const received = typeof missing === "string" ? undefined : valueAt(input, issue.instancePath);
  const code =
    issue.keyword === "required"
      ? "required"
      : issue.keyword === "format"
        ? `invalid_${String(issue.params.format)}`
        : `invalid_${issue.keyword}`;
  return {
    field: path || context || "body",
    message: issue.message ?? "is invalid",
    code,
    ...(received === undefined ? {} : { received: receivedOf(received) }),
  };
}

function inputOf(request: FastifyRequest, context: string | undefined): unknown {
  if (context === "querystring") return request.query;
  if (context === "params") return request.params;
  if (context === "headers") return request.headers;
  return request.body;
}

function problemOf(error: FastifyError | Error, request: FastifyRequest): HttpError {
  if (error instanceof HttpProblem) return error.problem;
  if (error instanceof ConnectError) return connectErrorToHttp(error);
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const input = inputOf(request, fastifyError.validationContext);
    return {
      statusCode: 422,
      code: "VALIDATION_ERROR",
      message: "Request validation failed",
      // A body of 50,000 wrong items would otherwise answer 150,000 violations.
      errors: fastifyError.validation
        .slice(0, maxViolations)
        .map((issue) => fieldViolationOf(issue, input, fastifyError.validationContext)),
    };
  }
  if (
    fastifyError.code === "FST_ERR_CTP_INVALID_JSON_BODY" ||
    fastifyError.code === "FST_ERR_CTP_EMPTY_JSON_BODY" ||
    error instanceof SyntaxError
  ) {
    return { statusCode: 400, code: "INVALID_JSON", message: "The request body is not valid JSON" };
  }
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return { statusCode: status, code: defaultCodeOfStatus[status] ?? "BAD_REQUEST", message: error.message };
  }
  return { statusCode: 500, code: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred" };
}

// A custom serializer makes Fastify skip its default content type: every error names it itself.
const jsonType = "application/json; charset=utf-8";

/** Every error and unknown route answers with the envelope of SPEC.md. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = problemOf(error, request);
    if (problem.statusCode >= 500) request.log.error({ err: error, requestId: request.id }, "request failed");
    // A service's own limit (for example auth emails per address) says when to come back.
    const retryAfter = problem.details?.retryAfterSeconds;
    if (problem.statusCode === 429 && retryAfter !== undefined && !reply.hasHeader("retry-after"))
      reply.header("retry-after", String(retryAfter));
    // Serialized as it is: a route's response schema for the status (the simple `{ error }` 400 of SPEC.md) must not reshape it.
    return reply.status(problem.statusCode).type(jsonType).serializer(JSON.stringify).send(errorEnvelope(problem, request.id));
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .type(jsonType)
      .serializer(JSON.stringify)
      .send(
        errorEnvelope(
          { statusCode: 404, code: "NOT_FOUND", message: `Route ${request.method} ${request.url.split("?")[0]} not found` },
          request.id,
        ),
      ),
  );
}
