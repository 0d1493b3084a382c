import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AccountService } from "@herald/proto/herald/identity/v1/account_service_pb";
import { Role } from "@herald/proto/herald/identity/v1/resources_pb";
import type { Accounts } from "../accounts/accounts.js";
import type { OAuthSignIn } from "../accounts/oauth-sign-in.js";
import type { Sessions } from "../accounts/sessions.js";
import type { Db } from "../db/client.js";
import { requireMembership } from "../projects/project-access.js";
import { roleToProto, sessionToProto, userToProto } from "./proto-mapping.js";

export function createAccountRpc(deps: {
  db: Db;
  accounts: Accounts;
  sessions: Sessions;
  oauth: OAuthSignIn;
  /** Whether payments are configured: reported to the gateway's /config, which holds no payment secret. */
  billingEnabled: boolean;
}): ServiceImpl<typeof AccountService> {
  const { accounts, sessions, oauth } = deps;
  return {
    async signUp(request) {
      const { user, session } = await accounts.signUp({ email: request.email, password: request.password, name: request.name });
      return { user: userToProto(user), ...(session ? { session: sessionToProto(session) } : {}) };
    },

    async logIn(request) {
      const { user, session } = await accounts.logIn({ email: request.email, password: request.password });
      return { user: userToProto(user), session: sessionToProto(session) };
    },

    async logOut(request) {
      await sessions.close(request.sessionToken);
      return {};
    },

    async authenticateSession(request) {
      const session = await sessions.authenticate(request.sessionToken);
      const membership = request.projectId ? await requireMembership(deps.db, request.projectId, session.user.id) : undefined;
      return {
        user: userToProto(session.user),
        sessionId: session.sessionId,
        role: membership ? roleToProto(membership.role) : Role.UNSPECIFIED,
        projectDisabled: membership?.project.disabled ?? false,
        expiresAt: timestampFromDate(session.expiresAt),
      };
    },

    async getUser(request) {
      return { user: userToProto(await accounts.getUser(request.userId)) };
    },

    getOAuthConfig: () => ({ providers: oauth.providers(), signupsEnabled: accounts.signupsEnabled, billingEnabled: deps.billingEnabled }),

    startOAuth: (request) => oauth.start(request.provider, request.redirectUri),

    async completeOAuth(request) {
      const { user, session, created } = await oauth.complete({
        provider: request.provider,
        code: request.code,
        redirectUri: request.redirectUri,
        returnedState: request.returnedState,
        expectedState: request.expectedState,
      });
      return { user: userToProto(user), session: sessionToProto(session), created };
    },

    async verifyEmail(request) {
      return { user: userToProto(await accounts.verifyEmail(request.token)) };
    },

    async requestVerification(request) {
      await accounts.requestVerification(request.email);
      return {};
    },

    async requestPasswordReset(request) {
      await accounts.requestPasswordReset(request.email);
      return {};
    },

    async resetPassword(request) {
      await accounts.resetPassword(request.token, request.password);
      return {};
    },
  };
}
