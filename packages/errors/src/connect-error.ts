import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorDetail, ErrorDetailSchema } from "@herald/proto/herald/common/v1/error_pb";
import type { DomainError, ErrorKind } from "./domain-error.js";

const codeOfKind: Record<ErrorKind, Code> = {
  "invalid-argument": Code.InvalidArgument,
  validation: Code.InvalidArgument,
  unauthenticated: Code.Unauthenticated,
  "permission-denied": Code.PermissionDenied,
  "not-found": Code.NotFound,
  conflict: Code.AlreadyExists,
  "failed-precondition": Code.FailedPrecondition,
  "rate-limited": Code.ResourceExhausted,
  unavailable: Code.Unavailable,
};

/** Turns a domain error into the ConnectError that crosses the wire, detail attached. */
export function domainErrorToConnect(error: DomainError): ConnectError {
  const detail = create(ErrorDetailSchema, {
    code: error.code,
    fieldViolations: error.fieldViolations.map((violation) => ({ ...violation, received: violation.received ?? "" })),
    details: error.details,
    suggestion: error.suggestion,
  });
  return new ConnectError(error.message, codeOfKind[error.kind], undefined, [{ desc: ErrorDetailSchema, value: detail }], error);
}

/** The structured detail of a ConnectError raised by a Herald service, if it has one. */
export function errorDetailOf(error: ConnectError): ErrorDetail | undefined {
  return error.findDetails(ErrorDetailSchema)[0];
}
