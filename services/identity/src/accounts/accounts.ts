import { isUniqueViolation } from "@herald/db";
import { DomainError } from "@herald/errors";
import type { Logger } from "@herald/platform";
import { queueAuthEmail } from "../db/auth-emails.js";
import type { Db, Tx } from "../db/client.js";
import { consumeOneTimeToken, isTokenUsable, storeOneTimeToken, voidOutstandingTokens } from "../db/one-time-tokens.js";
import { revokeUserSessions } from "../db/sessions.js";
import { createUser, findUserByEmail, findUserById, setPasswordHash, type User } from "../db/users.js";
import { passwordResetEmail, verificationEmail } from "../domain/auth-email-content.js";
import { normalizeEmail } from "../domain/email-address.js";
import { isId } from "../domain/ids.js";
import { createOneTimeToken, hashToken, type TokenPurpose } from "../domain/one-time-token.js";
import { maxPasswordLength } from "../domain/password.js";
import { type SignUpInput, validEmail, validNewPassword, validSignUp } from "../domain/sign-up.js";
import type { AuthEmailLimiter } from "./auth-email-limiter.js";
import type { HashingQueues } from "./hashing-limit.js";
import { recordProvenAddress } from "./proven-address.js";
import type { OpenedSession, Sessions } from "./sessions.js";

export interface SignedIn {
  user: User;
  session: OpenedSession;
}

/** A new account: signed in at once, unless REQUIRE_EMAIL_VERIFICATION makes it prove its address first. */
export interface SignedUp {
  user: User;
  session: OpenedSession | undefined;
}

export interface Accounts {
  /** Whether sign-up (by password or OAuth) creates accounts: DISABLE_SIGNUPS, as this service enforces it. */
  readonly signupsEnabled: boolean;
  signUp(input: SignUpInput): Promise<SignedUp>;
  logIn(credentials: { email: string; password: string }): Promise<SignedIn>;
  getUser(userId: string): Promise<User>;
  verifyEmail(token: string): Promise<User>;
  requestVerification(email: string): Promise<void>;
  requestPasswordReset(email: string): Promise<void>;
  resetPassword(token: string, password: string): Promise<void>;
}

export const signupsDisabled = () =>
  new DomainError("permission-denied", "SIGNUPS_DISABLED", "Sign-ups are disabled on this deployment", {
    suggestion: "Ask an administrator of this deployment for an account",
  });

const invalidCredentials = () => new DomainError("unauthenticated", "INVALID_CREDENTIALS", "Invalid email or password");

const invalidToken = () =>
  new DomainError("invalid-argument", "INVALID_TOKEN", "This link is invalid or has expired", { suggestion: "Ask for a new email" });

const emailNotVerified = () =>
  new DomainError("permission-denied", "EMAIL_NOT_VERIFIED", "Verify your email address before you sign in", {
    suggestion: "Open the link in the email we sent you, or ask for a new one",
  });

const emailTaken = () =>
  new DomainError("conflict", "EMAIL_TAKEN", "An account with this email already exists", {
    suggestion: "Log in, or reset your password if you forgot it",
  });

export function createAccounts(deps: {
  db: Db;
  logger: Logger;
  /** Sign-in's hash queue and that of new passwords (sign-up, reset), apart so that sign-ups cannot crowd out sign-ins. */
  passwords: HashingQueues;
  sessions: Sessions;
  limiter: AuthEmailLimiter;
  publicUrl: string;
  signupsDisabled: boolean;
  /** REQUIRE_EMAIL_VERIFICATION: sign-in waits until the address is proven. */
  requireEmailVerification: boolean;
  /** Called once a transaction that queued an account email committed (the hand-over's nudge). */
  emailQueued?: () => void;
}): Accounts {
  const { db, logger, passwords, sessions } = deps;

  /** A fresh link for the purpose, mailed through auth_emails in the caller's transaction. */
  async function queueTokenEmail(tx: Tx, user: User, purpose: TokenPurpose): Promise<{ id: string }> {
    const { token, tokenHash, expiresAt } = createOneTimeToken();
    await storeOneTimeToken(tx, { userId: user.id, purpose, tokenHash, expiresAt });
    const content = purpose === "verify_email" ? verificationEmail(deps.publicUrl, token) : passwordResetEmail(deps.publicUrl, token);
    return queueAuthEmail(tx, user.email, content, { tokenHash, expiresAt });
  }

  const logQueued = (email: { id: string }, kind: string) => {
    logger.info({ authEmailId: email.id, kind }, "account email queued");
    deps.emailQueued?.();
  };

  async function requestTokenEmail(purpose: TokenPurpose, address: string): Promise<void> {
    const email = validEmail(address);
    // Counted before the lookup: known and unknown addresses are limited alike.
    await deps.limiter.take(purpose, email);
    const user = await findUserByEmail(db, email);
    if (!user || (purpose === "verify_email" && user.emailVerifiedAt)) return;
    logQueued(await db.$transaction((tx) => queueTokenEmail(tx, user, purpose)), purpose);
  }

  return {
    signupsEnabled: !deps.signupsDisabled,
    async signUp(input) {
      if (deps.signupsDisabled) throw signupsDisabled();
      const form = validSignUp(input);
      if (await findUserByEmail(db, form.email)) throw emailTaken();
      const passwordHash = await passwords.newPassword.hash(form.password);
      let created: { user: User; email: { id: string } };
      try {
        created = await db.$transaction(async (tx) => {
          // Invitations to this address wait until the address is proven (proven-address.ts): whoever
          // registers an address first must not inherit the invitations meant for its owner.
          const user = await createUser(tx, { email: form.email, name: form.name, passwordHash, emailVerifiedAt: null });
          return { user, email: await queueTokenEmail(tx, user, "verify_email") };
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw emailTaken();
        throw error;
      }
      logQueued(created.email, "verify_email");
      // With REQUIRE_EMAIL_VERIFICATION the account signs in once the link in that email proved the address.
      return { user: created.user, session: deps.requireEmailVerification ? undefined : await sessions.open(created.user.id) };
    },

    async logIn(credentials) {
      const user = await findUserByEmail(db, normalizeEmail(credentials.email));
      const password = credentials.password.slice(0, maxPasswordLength + 1);
      if (!user?.passwordHash) {
        // As much work as a real check, so the answer's timing does not tell whether the address has an account.
        await passwords.signIn.verifyNothing(password);
        throw invalidCredentials();
      }
      if (!(await passwords.signIn.verify(password, user.passwordHash))) throw invalidCredentials();
      if (passwords.signIn.needsRehash(user.passwordHash)) await setPasswordHash(db, user.id, await passwords.signIn.hash(password));
      // After the password: only the address's owner learns that it still has to be proven.
      if (deps.requireEmailVerification && !user.emailVerifiedAt) throw emailNotVerified();
      return { user, session: await sessions.open(user.id) };
    },

    async getUser(userId) {
      const user = isId(userId) ? await findUserById(db, userId) : null;
      if (!user) throw new DomainError("not-found", "USER_NOT_FOUND", "User not found");
      return user;
    },

    async verifyEmail(token) {
      const now = new Date();
      return db.$transaction(async (tx) => {
        const userId = await consumeOneTimeToken(tx, hashToken(token), "verify_email", now);
        if (!userId) throw invalidToken();
        await voidOutstandingTokens(tx, userId, "verify_email", now);
        return recordProvenAddress(tx, userId, now);
      });
    },

    requestVerification: (email) => requestTokenEmail("verify_email", email),

    requestPasswordReset: (email) => requestTokenEmail("password_reset", email),

    async resetPassword(token, password) {
      validNewPassword(password);
      const tokenHash = hashToken(token);
      // A cheap look first: hashing a password for every guessed token would be work for free.
      if (!(await isTokenUsable(db, tokenHash, "password_reset", new Date()))) throw invalidToken();
      const passwordHash = await passwords.newPassword.hash(password);
      const now = new Date();
      await db.$transaction(async (tx) => {
        const userId = await consumeOneTimeToken(tx, tokenHash, "password_reset", now);
        if (!userId) throw invalidToken();
        await setPasswordHash(tx, userId, passwordHash);
        await revokeUserSessions(tx, userId, now);
        await voidOutstandingTokens(tx, userId, "password_reset", now);
        // The link arrived at the address, which proves it.
        await recordProvenAddress(tx, userId, now);
      });
    },
  };
}
