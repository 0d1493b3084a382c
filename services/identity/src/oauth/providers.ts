import type { Config } from "../config.js";
import { createGithubProvider } from "./github.js";
import { createGoogleProvider } from "./google.js";
import type { OAuthProvider, OAuthProviderName } from "./oauth-provider.js";

export type OAuthConfig = Pick<
  Config,
  | "GITHUB_CLIENT_ID"
  | "GITHUB_CLIENT_SECRET"
  | "GITHUB_OAUTH_URL"
  | "GITHUB_API_URL"
  | "GOOGLE_CLIENT_ID"
  | "GOOGLE_CLIENT_SECRET"
  | "GOOGLE_OAUTH_URL"
  | "GOOGLE_TOKEN_URL"
  | "GOOGLE_USERINFO_URL"
  | "OAUTH_TIMEOUT_MS"
>;

/** The providers this deployment has: each one whose client id and secret are both set. */
export function createOAuthProviders(config: OAuthConfig): Map<OAuthProviderName, OAuthProvider> {
  const providers = new Map<OAuthProviderName, OAuthProvider>();
  if (config.GITHUB_CLIENT_ID && config.GITHUB_CLIENT_SECRET) {
    providers.set(
      "github",
      createGithubProvider({
        clientId: config.GITHUB_CLIENT_ID,
        clientSecret: config.GITHUB_CLIENT_SECRET,
        oauthUrl: config.GITHUB_OAUTH_URL,
        apiUrl: config.GITHUB_API_URL,
        timeoutMs: config.OAUTH_TIMEOUT_MS,
      }),
    );
  }
  if (config.GOOGLE_CLIENT_ID && config.GOOGLE_CLIENT_SECRET) {
    providers.set(
      "google",
      createGoogleProvider({
        clientId: config.GOOGLE_CLIENT_ID,
        clientSecret: config.GOOGLE_CLIENT_SECRET,
        oauthUrl: config.GOOGLE_OAUTH_URL,
        tokenUrl: config.GOOGLE_TOKEN_URL,
        userInfoUrl: config.GOOGLE_USERINFO_URL,
        timeoutMs: config.OAUTH_TIMEOUT_MS,
      }),
    );
  }
  return providers;
}
