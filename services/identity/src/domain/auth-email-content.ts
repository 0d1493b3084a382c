import type { TokenPurpose } from "./one-time-token.js";

export type AuthEmailKind = TokenPurpose | "invitation" | "reputation_warning" | "reputation_suspension";

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

/** What the guard's emails say to do; the banner says the same (docs/api-decisions.md "Reputation guard"). */
const remedy =
  "Remove addresses that bounce and contacts who did not ask for your mail, send only to people who opted in, " +
  "and check the project's security page in the dashboard for its rates.";

/**
 * The reputation guard's warning to a project's owners and admins. The subject is fixed and the project's
 * free-text name appears only quoted, as in an invitation; the reason is Herald's own words and figures.
 */
export function reputationWarningEmail(publicUrl: string, project: { id: string; name: string }, reason: string): AuthEmailContent {
  const url = link(publicUrl, "dashboard", { project: project.id });
  return {
    kind: "reputation_warning",
    subject: "Your project's sending reputation needs attention",
    text:
      `${reason}.\n\nIf it goes on rising, Herald suspends the project's sending to protect every project on this deployment.\n\n` +
      `${remedy}\n\n${url}\n\nProject (id ${project.id}), named by its owner:\n"${quotedProjectName(project.name)}"\n`,
  };
}

/** The reputation guard's notice of a suspension: what stopped, what goes on, and who re-enables it. */
export function reputationSuspensionEmail(publicUrl: string, project: { id: string; name: string }, reason: string): AuthEmailContent {
  const url = link(publicUrl, "dashboard", { project: project.id });
  return {
    kind: "reputation_suspension",
    subject: "Your project's sending is suspended",
    text:
      `${reason}.\n\nThe project's API refuses new emails, its campaigns are paused where they were and its queued emails are held, ` +
      "unsent and kept. Tracking and unsubscribe links keep working. The operator of this Herald deployment re-enables it: " +
      `contact them once the cause is fixed.\n\n${remedy}\n\n${url}\n\nProject (id ${project.id}), named by its owner:\n"${quotedProjectName(project.name)}"\n`,
  };
}
