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

export function invitationEmail(
  publicUrl: string,
  invitation: { projectName: string; inviterEmail: string; email: string },
): AuthEmailContent {
  const url = link(publicUrl, "auth/signup", { email: invitation.email });
  return {
    kind: "invitation",
    subject: `You are invited to ${invitation.projectName} on Herald`,
    text: `${invitation.inviterEmail} invited you to the project "${invitation.projectName}" on Herald.\n\nCreate your account with this address and verify it to join:\n\n${url}\n`,
  };
}
