import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./gen/api.js";

export type { components, operations, paths } from "./gen/api.js";

/** SPEC.md's error envelope, which every 4xx and 5xx of the API carries. */
export interface HeraldErrorBody {
  success?: false;
  error: {
    code: string;
    message: string;
    statusCode: number;
    requestId?: string;
    details?: unknown;
    suggestion?: string;
  };
}

export type HeraldClient = Client<paths>;

/**
 * The body of every webhook Herald sends to a project's endpoints, signed to the Standard Webhooks specification
 * (this package's README shows how to verify it): `data` holds the project's id and the fact's ids, in camelCase.
 */
export interface HeraldWebhookEvent {
  /** email.delivered, contact.created, campaign.sent, …: GET /settings/webhooks/event-types lists them. */
  type: string;
  /** When the fact happened (ISO 8601). */
  timestamp: string;
  data: { projectId: string; [field: string]: unknown };
}

export interface HeraldClientOptions {
  /** The gateway's URL, for example https://herald.example.com. */
  baseUrl: string;
  /** A project's secret key (sk_…) for the API, or its public key (pk_…) for POST /v1/track; none for a session. */
  apiKey?: string;
  /** Sends the session cookie along (the dashboard, same origin); "same-origin" by default, as fetch does. */
  credentials?: "omit" | "same-origin" | "include";
  /** Another fetch, for tests or older runtimes. */
  fetch?: typeof fetch;
}

/**
 * A client of every route of the gateway's /openapi.json, typed from it: paths, path and query
 * parameters, bodies and answers. Each call resolves to `{ data }` on a 2xx and to `{ error }`
 * (the envelope) otherwise; it rejects only when no answer came (network).
 */
export function createHeraldClient(options: HeraldClientOptions): HeraldClient {
  let baseUrl = options.baseUrl;
  while (baseUrl.endsWith("/")) baseUrl = baseUrl.slice(0, -1);
  return createClient<paths>({
    baseUrl,
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : undefined,
    credentials: options.credentials,
    fetch: options.fetch,
  });
}

/** An answer that was not a 2xx, thrown by `orThrow` with the envelope's code and message. */
export class HeraldApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: HeraldErrorBody | undefined;

  constructor(status: number, body: unknown) {
    const envelope = isErrorBody(body) ? body : undefined;
    super(envelope ? `${envelope.error.code}: ${envelope.error.message}` : `HTTP ${status}`);
    this.name = "HeraldApiError";
    this.status = status;
    this.code = envelope?.error.code ?? "HTTP_ERROR";
    this.body = envelope;
  }
}

function isErrorBody(body: unknown): body is HeraldErrorBody {
  const error = (body as { error?: { code?: unknown } } | null)?.error;
  return typeof error?.code === "string";
}

/** The data of a call's 2xx answer, or a HeraldApiError: `const { data } = orThrow(await herald.GET(...))`. */
export function orThrow<T>(result: { data?: T; error?: unknown; response: Response }): { data: T } {
  if (!result.response.ok) throw new HeraldApiError(result.response.status, result.error);
  return { data: result.data as T };
}
