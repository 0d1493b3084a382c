import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { type FakeHttpServer, startFakeHttpServer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  expectFailure,
  type IdentityClients,
  type IdentityHarness,
  randomEmail,
  signUp,
  startIdentity,
  tokenFromEmail,
} from "../test-support/identity-harness.js";

interface GithubAccount {
  id: number;
  login: string;
  name: string | null;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
}

describe("sign-in with GitHub", () => {
  let github: FakeHttpServer;
  let identity: IdentityHarness;
  let closed: IdentityClients;
  /** Codes the fake GitHub accepts, each standing for one of its accounts. */
  const accounts = new Map<string, GithubAccount>();
  let nextId = 1000;
  const redirectUri = "http://herald.test/auth/oauth/github/callback";

  /** A GitHub account and a code GitHub would hand back for it. */
  function githubAccount(email: string, verified = true): { code: string; account: GithubAccount } {
    const account = { id: nextId++, login: `octo${nextId}`, name: null, emails: [{ email, primary: true, verified }] };
    const code = `code-${account.id}`;
    accounts.set(code, account);
    return { code, account };
  }

  beforeAll(async () => {
    // GitHub's three endpoints: the token exchange, the profile and the addresses.
    github = await startFakeHttpServer((request) => {
      if (request.method === "POST" && request.path === "/login/oauth/access_token") {
        const known = accounts.has(request.body.get("code") ?? "") && request.body.get("client_secret") === "gh-secret";
        return {
          status: 200,
          body: known ? { access_token: `token-${request.body.get("code")}`, token_type: "bearer" } : { error: "bad_verification_code" },
        };
      }
      const account = accounts.get((request.headers.authorization ?? "").replace("Bearer token-", ""));
      if (!account) return { status: 401, body: { message: "Bad credentials" } };
      if (request.path === "/user") return { status: 200, body: { id: account.id, login: account.login, name: account.name } };
      if (request.path === "/user/emails") return { status: 200, body: account.emails };
      return { status: 404, body: { message: "Not Found" } };
    });
    const env = {
      GITHUB_CLIENT_ID: "gh-client",
      GITHUB_CLIENT_SECRET: "gh-secret",
      GITHUB_OAUTH_URL: github.url,
      GITHUB_API_URL: github.url,
    };
    identity = await startIdentity(inject("herald"), env);
    closed = await identity.withConfig({ DISABLE_SIGNUPS: "true" });
  });

  afterAll(async () => {
    await identity?.stop();
    await github?.close();
  });

  const complete = (clients: IdentityClients, code: string, state = "s-1") =>
    clients.accounts.completeOAuth({ provider: "github", code, redirectUri, returnedState: state, expectedState: state });

  it("reports GitHub on and Google off, and builds GitHub's authorize URL with a fresh state", async () => {
    expect((await identity.accounts.getOAuthConfig({})).providers.map(({ name, enabled }) => ({ name, enabled }))).toEqual([
      { name: "github", enabled: true },
      { name: "google", enabled: false },
    ]);
    const started = await identity.accounts.startOAuth({ provider: "github", redirectUri });
    const url = new URL(started.authorizeUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${github.url}/login/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: "gh-client",
      redirect_uri: redirectUri,
      scope: "read:user user:email",
      state: started.state,
    });
    expect(Buffer.from(started.state, "base64url")).toHaveLength(32);
    expect((await identity.accounts.startOAuth({ provider: "github", redirectUri })).state).not.toBe(started.state);
    await expectFailure(
      identity.accounts.startOAuth({ provider: "google", redirectUri }),
      Code.FailedPrecondition,
      "OAUTH_PROVIDER_DISABLED",
    );
    await expectFailure(identity.accounts.startOAuth({ provider: "myspace", redirectUri }), Code.InvalidArgument, "OAUTH_PROVIDER_UNKNOWN");
  });

  it("creates a verified account on first sign-in and finds it again afterwards", async () => {
    const email = randomEmail("octo");
    const { code, account } = githubAccount(email.toUpperCase());
    const first = await complete(identity, code);
    expect(first).toMatchObject({ created: true, user: { email, emailVerified: true } });
    const session = await identity.accounts.authenticateSession({ sessionToken: first.session?.token ?? "" });
    expect(session.user?.id).toBe(first.user?.id);
    // Later the primary address changes on GitHub; the link by account id still finds the user.
    account.emails = [{ email: randomEmail("changed"), primary: true, verified: true }];
    const again = await complete(identity, code);
    expect(again).toMatchObject({ created: false, user: { id: first.user?.id } });
    const exchange = github.requests.find((request) => request.path === "/login/oauth/access_token");
    expect(exchange?.headers.accept).toBe("application/json");
    expect(exchange?.body.get("redirect_uri")).toBe(redirectUri);
  });

  it("links to an existing account with the same verified address", async () => {
    const existing = await signUp(identity);
    await identity.accounts.verifyEmail({ token: await tokenFromEmail(identity.db, existing.email, "verify_email") });
    const signedIn = await complete(identity, githubAccount(existing.email).code);
    expect(signedIn).toMatchObject({ created: false, user: { id: existing.user.id } });
    // A verified account keeps its password beside the new sign-in.
    expect((await identity.accounts.logIn({ email: existing.email, password: existing.password })).user?.id).toBe(existing.user.id);
  });

  it("takes an unverified account from whoever set its password, once GitHub proves the address", async () => {
    const planted = await signUp(identity);
    const signedIn = await complete(identity, githubAccount(planted.email).code);
    expect(signedIn.user).toMatchObject({ id: planted.user.id, emailVerified: true });
    await expectFailure(
      identity.accounts.logIn({ email: planted.email, password: planted.password }),
      Code.Unauthenticated,
      "INVALID_CREDENTIALS",
    );
    await expectFailure(identity.accounts.authenticateSession({ sessionToken: planted.token }), Code.Unauthenticated, "SESSION_INVALID");
  });

  it("refuses a mismatched state, a rejected code, and an account without a verified address", async () => {
    const { code } = githubAccount(randomEmail());
    await expectFailure(
      identity.accounts.completeOAuth({ provider: "github", code, redirectUri, returnedState: "evil", expectedState: "s-1" }),
      Code.InvalidArgument,
      "OAUTH_STATE_MISMATCH",
    );
    await expectFailure(
      identity.accounts.completeOAuth({ provider: "github", code, redirectUri, returnedState: "", expectedState: "" }),
      Code.InvalidArgument,
      "OAUTH_STATE_MISMATCH",
    );
    await expectFailure(complete(identity, "code-that-github-never-issued"), Code.InvalidArgument, "OAUTH_CODE_INVALID");
    await expectFailure(complete(identity, githubAccount(randomEmail(), false).code), Code.FailedPrecondition, "OAUTH_EMAIL_UNVERIFIED");
  });

  it("signs in existing users but creates none when sign-ups are disabled", async () => {
    await expectFailure(complete(closed, githubAccount(randomEmail()).code), Code.PermissionDenied, "SIGNUPS_DISABLED");
    const known = githubAccount(randomEmail());
    const created = await complete(identity, known.code);
    expect((await complete(closed, known.code)).user?.id).toBe(created.user?.id);
  });

  it("answers OAUTH_PROVIDER_UNAVAILABLE when GitHub cannot be reached", async () => {
    const offline = await identity.withConfig({ GITHUB_OAUTH_URL: "http://127.0.0.1:9", OAUTH_TIMEOUT_MS: "2000" });
    await expectFailure(complete(offline, githubAccount(randomEmail()).code), Code.Unavailable, "OAUTH_PROVIDER_UNAVAILABLE");
  });
});

describe("sign-in with Google", () => {
  let google: FakeHttpServer;
  let identity: IdentityHarness;
  const redirectUri = "http://herald.test/auth/oauth/google/callback";

  beforeAll(async () => {
    // Google's token endpoint and OpenID userinfo; one code stands for a verified address, one for an unverified one.
    google = await startFakeHttpServer((request) => {
      if (request.method === "POST" && request.path === "/token") {
        const code = request.body.get("code") ?? "";
        if (request.body.get("grant_type") !== "authorization_code" || !code.startsWith("good-"))
          return { status: 400, body: { error: "invalid_grant" } };
        return { status: 200, body: { access_token: code, token_type: "Bearer", expires_in: 3599 } };
      }
      if (request.path === "/userinfo") {
        const code = (request.headers.authorization ?? "").replace("Bearer ", "");
        return {
          status: 200,
          body: { sub: `sub-${code}`, email: `${code}@example.com`, email_verified: !code.includes("unverified"), name: "G User" },
        };
      }
      return { status: 404, body: {} };
    });
    identity = await startIdentity(inject("herald"), {
      GOOGLE_CLIENT_ID: "g-client",
      GOOGLE_CLIENT_SECRET: "g-secret",
      GOOGLE_OAUTH_URL: google.url,
      GOOGLE_TOKEN_URL: `${google.url}/token`,
      GOOGLE_USERINFO_URL: `${google.url}/userinfo`,
    });
  });

  afterAll(async () => {
    await identity?.stop();
    await google?.close();
  });

  const complete = (code: string) =>
    identity.accounts.completeOAuth({ provider: "google", code, redirectUri, returnedState: "st", expectedState: "st" });

  it("builds Google's authorize URL and signs in with a verified address", async () => {
    const started = await identity.accounts.startOAuth({ provider: "google", redirectUri });
    const url = new URL(started.authorizeUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${google.url}/o/oauth2/v2/auth`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: "g-client",
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "openid email profile",
      state: started.state,
    });
    const code = `good-${randomUUID()}`;
    const signedIn = await complete(code);
    expect(signedIn).toMatchObject({ created: true, user: { email: `${code}@example.com`, name: "G User", emailVerified: true } });
    await expectFailure(complete(`good-unverified-${randomUUID()}`), Code.FailedPrecondition, "OAUTH_EMAIL_UNVERIFIED");
    await expectFailure(complete("bad"), Code.InvalidArgument, "OAUTH_CODE_INVALID");
  });
});
