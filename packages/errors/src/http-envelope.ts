import { Code, ConnectError } from "@connectrpc/connect";
import { errorDetailOf } from "./connect-error.js";
import type { FieldViolation } from "./domain-error.js";

/** The error envelope of SPEC.md "Errors". */
export interface ErrorEnvelope {
  success: false;
  error: {
    code: string;
    message: string;
    statusCode: number;
    requestId: string;
    errors?: FieldViolation[];
    details?: Record<string, unknown>;
    suggestion?: string;
  };
  timestamp: string;
}

export interface HttpError {
  statusCode: number;
  code: string;
  message: string;
  errors?: FieldViolation[];
  details?: Record<string, unknown>;
  suggestion?: string;
}

const statusOfCode: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.FailedPrecondition]: 400,
  [Code.OutOfRange]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 504,
};

/** The generic machine code for a status, used when a service attached none. */
export const defaultCodeOfStatus: Record<number, string> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  422: "VALIDATION_ERROR",
  429: "RATE_LIMIT_EXCEEDED",
  500: "INTERNAL_SERVER_ERROR",
  501: "NOT_IMPLEMENTED",
  503: "SERVICE_UNAVAILABLE",
  504: "GATEWAY_TIMEOUT",
};

/**
 * Maps an error from an upstream call to the HTTP answer. Only ConnectErrors carry
 * a message meant for clients; anything else is an internal error whose text stays in the logs.
 */
export function connectErrorToHttp(error: unknown): HttpError {
  if (!(error instanceof ConnectError)) {
    return { statusCode: 500, code: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred" };
  }
  const detail = errorDetailOf(error);
  const validation = detail?.code === "VALIDATION_ERROR";
  const statusCode = validation ? 422 : (statusOfCode[error.code] ?? 500);
  const internal = statusCode >= 500 && statusCode !== 503 && statusCode !== 504;
  return {
    statusCode,
    code: detail?.code || (defaultCodeOfStatus[statusCode] ?? "INTERNAL_SERVER_ERROR"),
    message: internal ? "An unexpected error occurred" : error.rawMessage,
    ...(detail && detail.fieldViolations.length > 0
      ? {
          errors: detail.fieldViolations.map(({ field, message, code, received }) => ({
            field,
            message,
            code,
            ...(received ? { received } : {}),
          })),
        }
      : {}),
    ...(detail && Object.keys(detail.details).length > 0 ? { details: { ...detail.details } } : {}),
    ...(detail?.suggestion ? { suggestion: detail.suggestion } : {}),
  };
}

export function errorEnvelope(error: HttpError, requestId: string, now = new Date()): ErrorEnvelope {
  const { statusCode, code, message, errors, details, suggestion } = error;
  return {
    success: false,
    error: {
      code,
      message,
      statusCode,
      requestId,
      ...(errors ? { errors } : {}),
      ...(details ? { details } : {}),
      ...(suggestion ? { suggestion } : {}),
    },
    timestamp: now.toISOString(),
  };
}
