import { randomBytes } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Session } from "@herald/proto/herald/identity/v1/resources_pb";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { LoginBackoff } from "../../auth/login-backoff.js";
import type { SessionCache } from "../../auth/session-cache.js";
import { clearSessionCookie, readSessionToken, setSessionCookie } from "../../auth/session-cookie.js";
import type { Upstreams } from "../../upstreams.js";
import { toUserJson, UserSchema } from "./json.js";

const Email = Type.String({ minLength: 3, maxLength: 254 });
const Password = Type.String({ minLength: 1, maxLength: 256 });
const Success = Type.Object({ success: Type.Boolean() });
const UserAnswer = Type.Object({ user: UserSchema });
const oauthStateCookie = "herald_oauth_state";
const providers = ["github", "google"] as const;

export function registerAuthRoutes(
  app: FastifyInstance,
  deps: { upstreams: Upstreams; sessions: SessionCache; loginBackoff: LoginBackoff; publicUrl: string },
): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts } = deps.upstreams;
  const secure = new URL(deps.publicUrl).protocol === "https:";
  const tags = ["Authentication"];
  const startSession = (reply: FastifyReply, session: Session | undefined) => {
    if (session?.token && session.expiresAt) setSessionCookie(reply, session.token, timestampDate(session.expiresAt), secure);
  };

  api.post(
    "/auth/signup",
    {
      config: { rateLimitBucket: "sign-up" },
      schema: {
        tags,
        summary: "Create an account and sign in (with REQUIRE_EMAIL_VERIFICATION, no session until the address is proven)",
        body: Type.Object({ email: Email, password: Password, name: Type.Optional(Type.String({ maxLength: 100 })) }),
        response: { 201: UserAnswer },
      },
    },
    async (request, reply) => {
      const answer = await accounts.signUp({ email: request.body.email, password: request.body.password, name: request.body.name ?? "" });
      startSession(reply, answer.session);
      return reply.status(201).send({ user: toUserJson(answer.user) });
    },
  );

  api.post(
    "/auth/login",
    {
      schema: {
        tags,
        summary: "Sign in; sets the session cookie",
        body: Type.Object({ email: Email, password: Password }),
        response: { 200: UserAnswer },
      },
    },
    async (request, reply) => {
      // The attempt is counted before identity hashes the password: a wrong one is already a failure.
      const attempt = await deps.loginBackoff.reserve(request.body.email, request.ip);
      let answer: Awaited<ReturnType<typeof accounts.logIn>>;
      try {
        answer = await accounts.logIn(request.body);
      } catch (error) {
        if (!(error instanceof ConnectError && error.code === Code.Unauthenticated)) await attempt.released();
        throw error;
      }
      await attempt.succeeded();
      startSession(reply, answer.session);
      return { user: toUserJson(answer.user) };
    },
  );

  const logOut = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = readSessionToken(request);
    if (token) {
      deps.sessions.forget(token);
      await accounts.logOut({ sessionToken: token });
    }
    clearSessionCookie(reply, secure);
    return { success: true };
  };
  // POST is the form a dashboard should use; GET stays because SPEC.md lists it.
  api.post("/auth/logout", { schema: { tags, summary: "Sign out; clears the session cookie", response: { 200: Success } } }, logOut);
  api.get("/auth/logout", { schema: { tags, summary: "Sign out; clears the session cookie", response: { 200: Success } } }, logOut);

  api.get(
    "/auth/oauth-config",
    {
      schema: {
        tags,
        summary: "OAuth providers this deployment offers",
        response: {
          200: Type.Object({ providers: Type.Array(Type.Object({ name: Type.String(), enabled: Type.Boolean(), url: Type.String() })) }),
        },
      },
    },
    async () => {
      const answer = await accounts.getOAuthConfig({});
      return { providers: answer.providers.map(({ name, enabled }) => ({ name, enabled, url: `/auth/oauth/${name}` })) };
    },
  );

  const Provider = Type.Object({ provider: Type.Union(providers.map((name) => Type.Literal(name))) });
  const callbackUrl = (provider: string) => new URL(`/auth/oauth/${provider}/callback`, deps.publicUrl).toString();

  api.get(
    "/auth/oauth/:provider",
    { schema: { tags, summary: "Start OAuth sign-in (redirects to the provider)", params: Provider } },
    async (request, reply) => {
      const answer = await accounts.startOAuth({ provider: request.params.provider, redirectUri: callbackUrl(request.params.provider) });
      reply.setCookie(oauthStateCookie, answer.state, { httpOnly: true, sameSite: "lax", secure, path: "/auth/oauth", maxAge: 600 });
      return reply.redirect(answer.authorizeUrl, 302);
    },
  );

  api.get(
    "/auth/oauth/:provider/callback",
    {
      schema: {
        tags,
        summary: "OAuth callback: signs in and redirects to the dashboard",
        params: Provider,
        querystring: Type.Object({ code: Type.String({ minLength: 1 }), state: Type.String({ minLength: 1 }) }),
      },
    },
    async (request, reply) => {
      const answer = await accounts.completeOAuth({
        provider: request.params.provider,
        code: request.query.code,
        redirectUri: callbackUrl(request.params.provider),
        returnedState: request.query.state,
        // A missing cookie must never match: compare against a value nobody holds.
        expectedState: request.cookies[oauthStateCookie] || randomBytes(16).toString("hex"),
      });
      reply.clearCookie(oauthStateCookie, { path: "/auth/oauth" });
      startSession(reply, answer.session);
      return reply.redirect(deps.publicUrl, 302);
    },
  );

  api.post(
    "/auth/verify-email",
    {
      schema: {
        tags,
        summary: "Verify an address with the token from the email",
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) }),
        response: { 200: UserAnswer },
      },
    },
    async (request) => ({ user: toUserJson((await accounts.verifyEmail(request.body)).user) }),
  );

  api.post(
    "/auth/request-verification",
    { schema: { tags, summary: "Send the verification email again", body: Type.Object({ email: Email }), response: { 200: Success } } },
    async (request) => {
      await accounts.requestVerification(request.body);
      return { success: true };
    },
  );

  api.post(
    "/auth/request-password-reset",
    { schema: { tags, summary: "Send a password reset email", body: Type.Object({ email: Email }), response: { 200: Success } } },
    async (request) => {
      await accounts.requestPasswordReset(request.body);
      return { success: true };
    },
  );

  api.post(
    "/auth/reset-password",
    {
      schema: {
        tags,
        summary: "Set a new password with the token from the email",
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }), password: Password }),
        response: { 200: Success },
      },
    },
    async (request) => {
      await accounts.resetPassword(request.body);
      return { success: true };
    },
  );
}
