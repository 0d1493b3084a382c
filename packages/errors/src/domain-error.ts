/** What kind of failure a domain error is; the RPC layer maps it to a Connect code. */
export type ErrorKind =
  | "invalid-argument"
  | "validation"
  | "unauthenticated"
  | "permission-denied"
  | "not-found"
  | "conflict"
  | "failed-precondition"
  | "rate-limited"
  | "unavailable";

export interface FieldViolation {
  field: string;
  message: string;
  code: string;
  /** The offending value as JSON text, when it helps the caller. */
  received?: string;
}

export interface DomainErrorOptions {
  fieldViolations?: FieldViolation[];
  details?: Record<string, string>;
  suggestion?: string;
  cause?: unknown;
}

/**
 * An error a caller caused on purpose-built paths of the domain: it carries the
 * machine code of SPEC.md's error envelope and travels to the gateway intact.
 */
export class DomainError extends Error {
  override readonly name = "DomainError";
  readonly fieldViolations: FieldViolation[];
  readonly details: Record<string, string>;
  readonly suggestion: string;

  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.fieldViolations = options.fieldViolations ?? [];
    this.details = options.details ?? {};
    this.suggestion = options.suggestion ?? "";
  }
}

export const notFound = (what: string, options?: DomainErrorOptions) =>
  new DomainError("not-found", "NOT_FOUND", `${what} not found`, options);

export const validationFailed = (message: string, fieldViolations: FieldViolation[]) =>
  new DomainError("validation", "VALIDATION_ERROR", message, { fieldViolations });
