import type { TokenPurpose } from "./one-time-token.js";

export type AuthEmailKind = TokenPurpose | "invitation";

export interface AuthEmailContent {
  kind: AuthEmailKind;
  subject: string;
  text: string;
}

const link = (publicUrl: string, path: string, params: Record<string, string>) => {
  const url = new URL(path, publicUrl.endsWith("/") ? publicUrl : `${publicUrl}/`);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
};

export function verificationEmail(publicUrl: string, token: string): AuthEmailContent {
  const url = link(publicUrl, "auth/verify-email", { token });
  return {
    kind: "verify_email",
    subject: "Verify your email address",
    text: `Confirm that this address is yours by opening the link below. It works once, for one hour.\n\n${url}\n\nIf you did not sign up for Herald, ignore this email.\n`,
  };
}

export function passwordResetEmail(publicUrl: string, token: string): AuthEmailContent {
  const url = link(publicUrl, "auth/reset-password", { token });
  return {
    kind: "password_reset",
    subject: "Reset your password",
    text: `Choose a new password by opening the link below. It works once, for one hour, and signs you out everywhere.\n\n${url}\n\nIf you did not ask for this, ignore this email: your password stays as it is.\n`,
  };
}

/** Longest project name an invitation quotes; longer ones are cut with an ellipsis. */
const quotedNameLength = 60;

/**
 * The project's name as an invitation quotes it: one line, without control, format (bidi overrides,
 * zero-width) or line-separator characters, at most quotedNameLength characters. The name is free
 * text of whoever made the project, so it can only appear quoted and labelled as theirs.
 */
export function quotedProjectName(name: string): string {
  const flat = name
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  const chars = [...flat];
  return chars.length > quotedNameLength ? `${chars.slice(0, quotedNameLength - 1).join("")}…` : flat;
}

/**
 * An invitation. The subject is fixed: the project's free-text name never reaches it, so that a
 * DKIM-signed email from Herald cannot read "Verify payroll at evil.example". In the body, Herald's
 * own words come first and the name only after them, quoted on a line that says who chose it
 * (docs/security.md "Invitations").
 */
export function invitationEmail(
  publicUrl: string,
  invitation: { projectName: string; inviterEmail: string; email: string },
): AuthEmailContent {
  const url = link(publicUrl, "auth/signup", { email: invitation.email });
  return {
    kind: "invitation",
    subject: "You are invited to a project on Herald",
    text:
      `${invitation.inviterEmail} invited you to join a project on Herald.\n\n` +
      `Create your account with this address and verify it to join:\n\n${url}\n\n` +
      `If you do not know ${invitation.inviterEmail}, ignore this email.\n\n` +
      // Two short lines: a mail client or transfer encoding may wrap a long one, which must not part the label from the name.
      `Project name, as written by the person who invited you (not by Herald):\n"${quotedProjectName(invitation.projectName)}"\n`,
  };
}
