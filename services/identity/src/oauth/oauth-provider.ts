import { DomainError } from "@herald/errors";

export type OAuthProviderName = "github" | "google";

export const oauthProviderNames: readonly OAuthProviderName[] = ["github", "google"];

/** Who the provider says signed in. */
export interface OAuthProfile {
  providerAccountId: string;
  /** Lower-cased; undefined when the provider has no verified address for the account. */
  verifiedEmail: string | undefined;
  name: string;
}

export interface OAuthProvider {
  readonly name: OAuthProviderName;
  authorizeUrl(redirectUri: string, state: string): string;
  /** Trades the authorization code for the signed-in account. */
  exchange(code: string, redirectUri: string): Promise<OAuthProfile>;
}

export const providerUnavailable = (provider: string, cause: unknown) =>
  new DomainError("unavailable", "OAUTH_PROVIDER_UNAVAILABLE", `${provider} could not be reached; try again`, { cause });

export const codeRejected = (provider: string, reason: string) =>
  new DomainError("invalid-argument", "OAUTH_CODE_INVALID", `${provider} did not accept the sign-in: ${reason}`, {
    suggestion: "Start the sign-in again",
  });

/**
 * A JSON call to a provider with a deadline. Network failures, timeouts and 5xx
 * answers mean "try later"; 4xx means the provider refused what we sent.
 */
export async function fetchProviderJson(provider: string, url: string, init: RequestInit & { timeoutMs: number }): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs) });
  } catch (error) {
    throw providerUnavailable(provider, error);
  }
  if (response.status >= 500) throw providerUnavailable(provider, new Error(`${url} answered ${response.status}`));
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw codeRejected(provider, `${response.status} from ${new URL(url).pathname}`);
  return body;
}
