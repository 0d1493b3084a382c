import { createTestDatabase, type FakeHttpServer, startFakeHttpServer, startService, type TestDatabase } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestGateway } from "./support/gateway.js";

const herald = inject("herald");

/** GitHub's OAuth code flow through the gateway's routes, against a local stand-in for GitHub's three endpoints. */
describe("sign-in with GitHub through the gateway", () => {
  let github: FakeHttpServer;
  let database: TestDatabase;
  let identity: Awaited<ReturnType<typeof startService>>;
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;
  const publicUrl = "http://herald.test";

  beforeAll(async () => {
    github = await startFakeHttpServer((request) => {
      if (request.method === "POST" && request.path === "/login/oauth/access_token") {
        const ok = request.body.get("code") === "good-code" && request.body.get("client_secret") === "gh-secret";
        return { status: 200, body: ok ? { access_token: "gh-token", token_type: "bearer" } : { error: "bad_verification_code" } };
      }
      if (request.headers.authorization !== "Bearer gh-token") return { status: 401, body: { message: "Bad credentials" } };
      if (request.path === "/user") return { status: 200, body: { id: 4242, login: "octocat", name: "Octo Cat" } };
      if (request.path === "/user/emails") return { status: 200, body: [{ email: "octocat@example.com", primary: true, verified: true }] };
      return { status: 404, body: { message: "Not Found" } };
    });
    const oauthEnv = { GITHUB_CLIENT_ID: "gh-client", GITHUB_CLIENT_SECRET: "gh-secret" };
    database = await createTestDatabase(herald.databaseUrl);
    identity = await startService(
      "identity",
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      undefined,
      { ...oauthEnv, GITHUB_OAUTH_URL: github.url, GITHUB_API_URL: github.url, PUBLIC_URL: publicUrl, PASSWORD_SCRYPT_LOG_N: "14" },
    );
    gateway = await createTestGateway({
      serviceUrls: { ...herald.stack.serviceUrls, identity: identity.url },
      redisUrl: herald.redisUrl,
      // The gateway holds no OAuth secret: /config and the redirects come from identity.
      env: { PUBLIC_URL: publicUrl },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await identity?.process.stop();
    await database?.drop();
    await github?.close();
  });

  it("reports GitHub as enabled", async () => {
    expect((await gateway.app.inject({ method: "GET", url: "/config" })).json().oauth).toEqual({ github: true, google: false });
    const config = (await gateway.app.inject({ method: "GET", url: "/auth/oauth-config" })).json();
    expect(config.providers).toEqual(
      expect.arrayContaining([
        { name: "github", enabled: true, url: "/auth/oauth/github" },
        { name: "google", enabled: false, url: "/auth/oauth/google" },
      ]),
    );
  });

  it("redirects to GitHub, then signs in on the callback and sets the session cookie", async () => {
    const start = await gateway.app.inject({ method: "GET", url: "/auth/oauth/github" });
    expect(start.statusCode).toBe(302);
    const authorize = new URL(start.headers.location as string);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${github.url}/login/oauth/authorize`);
    expect(authorize.searchParams.get("client_id")).toBe("gh-client");
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${publicUrl}/auth/oauth/github/callback`);
    const state = authorize.searchParams.get("state") ?? "";
    const stateCookie = start.cookies.find((cookie) => cookie.name === "herald_oauth_state");
    expect(stateCookie?.value).toBe(state);
    expect(stateCookie?.httpOnly).toBe(true);

    const forged = await gateway.app.inject({
      method: "GET",
      url: `/auth/oauth/github/callback?code=good-code&state=someone-elses`,
      cookies: { herald_oauth_state: state },
    });
    expect(forged.statusCode).toBe(400);
    expect(forged.json().error.code).toBe("OAUTH_STATE_MISMATCH");

    const callback = await gateway.app.inject({
      method: "GET",
      url: `/auth/oauth/github/callback?code=good-code&state=${encodeURIComponent(state)}`,
      cookies: { herald_oauth_state: state },
    });
    expect(callback.statusCode).toBe(302);
    expect(callback.headers.location).toBe(publicUrl);
    const session = callback.cookies.find((cookie) => cookie.name === "herald_session");
    expect(session?.value).toBeTruthy();

    const me = await gateway.app.inject({ method: "GET", url: "/users/@me", cookies: { herald_session: session?.value ?? "" } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ email: "octocat@example.com", emailVerified: true });
  });

  it("refuses a callback without the state cookie", async () => {
    const answer = await gateway.app.inject({ method: "GET", url: "/auth/oauth/github/callback?code=good-code&state=anything" });
    expect(answer.statusCode).toBe(400);
    expect(answer.json().error.code).toBe("OAUTH_STATE_MISMATCH");
  });
});
