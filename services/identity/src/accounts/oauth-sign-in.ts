import { isUniqueViolation } from "@herald/db";
import { DomainError, validationFailed } from "@herald/errors";
import type { Db } from "../db/client.js";
import { findUserByOAuthAccount, linkOAuthAccount } from "../db/oauth-accounts.js";
import { revokeUserSessions } from "../db/sessions.js";
import { createUser, findUserByEmail, setPasswordHash, type User } from "../db/users.js";
import { createOAuthState, statesMatch } from "../domain/oauth-state.js";
import { type OAuthProfile, type OAuthProvider, type OAuthProviderName, oauthProviderNames } from "../oauth/oauth-provider.js";
import { signupsDisabled } from "./accounts.js";
import { recordProvenAddress } from "./proven-address.js";
import type { OpenedSession, Sessions } from "./sessions.js";

export interface OAuthSignIn {
  providers(): Array<{ name: OAuthProviderName; enabled: boolean }>;
  start(provider: string, redirectUri: string): { authorizeUrl: string; state: string };
  complete(request: {
    provider: string;
    code: string;
    redirectUri: string;
    returnedState: string;
    expectedState: string;
  }): Promise<{ user: User; session: OpenedSession; created: boolean }>;
}

function validRedirectUri(redirectUri: string): string {
  if (URL.canParse(redirectUri) && /^https?:$/.test(new URL(redirectUri).protocol)) return redirectUri;
  throw validationFailed("Invalid OAuth request", [
    { field: "redirect_uri", message: "Must be an http:// or https:// URL", code: "invalid_url", received: JSON.stringify(redirectUri) },
  ]);
}

export function createOAuthSignIn(deps: {
  db: Db;
  providers: ReadonlyMap<OAuthProviderName, OAuthProvider>;
  sessions: Sessions;
  signupsDisabled: boolean;
}): OAuthSignIn {
  const { db } = deps;

  function providerNamed(name: string): OAuthProvider {
    if (!oauthProviderNames.includes(name as OAuthProviderName)) {
      throw new DomainError("invalid-argument", "OAUTH_PROVIDER_UNKNOWN", `Unknown OAuth provider "${name}"`, {
        suggestion: `Use one of: ${oauthProviderNames.join(", ")}`,
      });
    }
    const provider = deps.providers.get(name as OAuthProviderName);
    if (!provider)
      throw new DomainError("failed-precondition", "OAUTH_PROVIDER_DISABLED", `Sign-in with ${name} is not enabled on this deployment`);
    return provider;
  }

  /** The user the provider's account belongs to, linking or creating one; created tells which. */
  async function userOf(provider: OAuthProviderName, profile: OAuthProfile): Promise<{ user: User; created: boolean }> {
    const linked = await findUserByOAuthAccount(db, provider, profile.providerAccountId);
    if (linked) return { user: linked, created: false };
    const email = profile.verifiedEmail;
    if (!email) {
      throw new DomainError(
        "failed-precondition",
        "OAUTH_EMAIL_UNVERIFIED",
        "Your account with this provider has no verified email address",
        {
          suggestion: "Verify your primary email address with the provider, then try again",
        },
      );
    }
    const link = { provider, providerAccountId: profile.providerAccountId };
    const now = new Date();
    const existing = await findUserByEmail(db, email);
    if (existing) {
      const user = await db.$transaction(async (tx) => {
        if (!existing.emailVerifiedAt) {
          // Whoever set this account's password never proved the address; the provider just did. A password
          // planted by someone else must not keep working next to the real owner's sign-in.
          await setPasswordHash(tx, existing.id, null);
          await revokeUserSessions(tx, existing.id, now);
        }
        await linkOAuthAccount(tx, { ...link, userId: existing.id });
        return recordProvenAddress(tx, existing.id, now);
      });
      return { user, created: false };
    }
    if (deps.signupsDisabled) throw signupsDisabled();
    const user = await db.$transaction(async (tx) => {
      const created = await createUser(tx, { email, name: profile.name.slice(0, 100), passwordHash: null, emailVerifiedAt: now });
      await linkOAuthAccount(tx, { ...link, userId: created.id });
      return recordProvenAddress(tx, created.id, now);
    });
    return { user, created: true };
  }

  return {
    providers: () => oauthProviderNames.map((name) => ({ name, enabled: deps.providers.has(name) })),

    start(providerName, redirectUri) {
      const provider = providerNamed(providerName);
      const state = createOAuthState();
      return { authorizeUrl: provider.authorizeUrl(validRedirectUri(redirectUri), state), state };
    },

    async complete(request) {
      const provider = providerNamed(request.provider);
      if (!statesMatch(request.returnedState, request.expectedState)) {
        throw new DomainError("invalid-argument", "OAUTH_STATE_MISMATCH", "The sign-in could not be verified", {
          suggestion: "Start the sign-in again from the same browser",
        });
      }
      if (!request.code) throw new DomainError("invalid-argument", "OAUTH_CODE_INVALID", "The provider returned no authorization code");
      const profile = await provider.exchange(request.code, validRedirectUri(request.redirectUri));
      let outcome: { user: User; created: boolean };
      try {
        outcome = await userOf(provider.name, profile);
      } catch (error) {
        // Two first sign-ins of one person at once: the loser finds what the winner made.
        if (!isUniqueViolation(error)) throw error;
        outcome = await userOf(provider.name, profile);
      }
      return { ...outcome, session: await deps.sessions.open(outcome.user.id) };
    },
  };
}
