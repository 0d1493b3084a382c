import { testSmtpSinkClient } from "@herald/testing";
import { type ParsedMail, simpleParser } from "mailparser";
import { inject } from "vitest";

/** The account emails identity writes and delivery sends, told apart by their subjects (services/identity/src/domain/auth-email-content.ts). */
export type AccountEmailKind =
  | "verify_email"
  | "password_reset"
  | "invitation"
  | "reputation_warning"
  | "reputation_suspension"
  | "webhook_disabled";

const subjects: Record<AccountEmailKind, RegExp> = {
  verify_email: /^Verify your email address$/,
  password_reset: /^Reset your password$/,
  invitation: /^You are invited to /,
  reputation_warning: /^Your project's sending reputation needs attention$/,
  reputation_suspension: /^Your project's sending is suspended$/,
  // The webhooks service's, through the same system mail (services/webhooks/src/delivery/admin-notice.ts).
  webhook_disabled: /^A webhook endpoint of your Herald project was disabled$/,
};

export interface AccountEmail {
  kind: AccountEmailKind;
  subject: string;
  /** The plain-text part, decoded. */
  text: string;
  /** The message as the SMTP sink received it. */
  raw: string;
  parsed: ParsedMail;
  /** The envelope sender. */
  envelopeFrom: string;
}

/**
 * The newest account email of the kind that reached the address at the stack's SMTP sink, once at least `count`
 * of them have: delivery sends them, and erases their bodies once sent, so the sink is the only place to read them.
 */
export async function accountEmail(
  to: string,
  kind: AccountEmailKind,
  options: { count?: number; timeoutMs?: number } = {},
): Promise<AccountEmail> {
  const sink = testSmtpSinkClient(inject("herald").smtp.controlUrl);
  const count = options.count ?? 1;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const found: AccountEmail[] = [];
    for (const message of await sink.messages(to)) {
      const parsed = await simpleParser(message.raw);
      if (subjects[kind].test(parsed.subject ?? "")) {
        found.push({ kind, subject: parsed.subject ?? "", text: parsed.text ?? "", raw: message.raw, parsed, envelopeFrom: message.from });
      }
    }
    const newest = found.at(-1);
    if (found.length >= count && newest) return newest;
    if (Date.now() > deadline) throw new Error(`${found.length} of ${count} ${kind} emails reached ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const tokenIn = (text: string) => /token=([A-Za-z0-9_-]+)/.exec(text)?.[1] ?? "";
