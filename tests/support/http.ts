import { randomUUID } from "node:crypto";
import { accountEmail, tokenIn } from "./auth-emails.js";

export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw text sent as the body, for malformed JSON. */
  rawBody?: string;
  key?: string;
  cookie?: string;
  headers?: Record<string, string>;
}

/** A small client for the gateway's REST API, as an application would call it. */
export function restClient(baseUrl: string) {
  return async function call<T = Record<string, unknown>>(method: string, path: string, options: RequestOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.cookie) {
      headers.cookie = options.cookie;
      // As the dashboard's own pages would: changes made with a session need the origin (or a JSON body).
      headers.origin ??= new URL(baseUrl).origin;
    }
    let body: string | undefined;
    if (options.rawBody !== undefined || options.body !== undefined) {
      headers["content-type"] ??= "application/json";
      body = options.rawBody ?? JSON.stringify(options.body);
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: "manual" });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T, headers: response.headers };
  };
}

export type RestClient = ReturnType<typeof restClient>;

/** The session cookie a response set, as a Cookie header value. */
export function sessionCookieOf(answer: Answer<unknown>): string {
  const cookie = answer.headers.getSetCookie().find((value) => value.startsWith("herald_session="));
  if (!cookie) throw new Error(`no session cookie in ${answer.status} answer`);
  return cookie.split(";")[0] ?? "";
}

export const uniqueEmail = (label = "user") => `${label}-${randomUUID().slice(0, 8)}@example.com`;

export interface SignedInUser {
  email: string;
  password: string;
  cookie: string;
  id: string;
}

export async function signUp(call: RestClient, label = "user"): Promise<SignedInUser> {
  const email = uniqueEmail(label);
  const password = `pw-${randomUUID()}`;
  const answer = await call<{ user: { id: string } }>("POST", "/auth/signup", { body: { email, password, name: label } });
  if (answer.status !== 201) throw new Error(`sign-up failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { email, password, cookie: sessionCookieOf(answer), id: answer.body.user.id };
}

/** Follows the link of the sign-up email that reached the SMTP sink, as the address's owner would. */
export async function verifyAddress(call: RestClient, user: { email: string }): Promise<void> {
  const { text } = await accountEmail(user.email, "verify_email");
  const answer = await call("POST", "/auth/verify-email", { body: { token: tokenIn(text) } });
  if (answer.status !== 200) throw new Error(`verification failed: ${answer.status} ${JSON.stringify(answer.body)}`);
}

export interface CreatedProject {
  id: string;
  secretKey: string;
  publicKey: string;
}

export async function createProject(call: RestClient, cookie: string, name = "Test project"): Promise<CreatedProject> {
  const answer = await call<CreatedProject>("POST", "/users/@me/projects", { cookie, body: { name } });
  if (answer.status !== 201) throw new Error(`project creation failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/**
 * How long a test waits for what a consumer of email activity does (identity's counters and reputation guard, contacts'
 * timeline): those consumers read every stack's activity of the run (one topic), and after the crash tests' bursts of
 * thousands of emails they may trail by tens of seconds.
 */
export const consumerLagMs = 90_000;
