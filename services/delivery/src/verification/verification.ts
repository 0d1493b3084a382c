import { domainToASCII } from "node:url";
import { validationFailed } from "@herald/errors";
import mailchecker from "mailchecker";
import type pg from "pg";
import { suppressedAmong } from "../db/emails.js";
import { domainOfAddress, isEmailAddress, normaliseAddress } from "../domain/email-input.js";
import { requireProjectId } from "../domain/ids.js";
import type { MailExchangeAnswer, MailExchangeLookup } from "./mail-exchange.js";

export type Verdict = "deliverable" | "risky" | "undeliverable" | "unknown";

export type VerificationReason =
  | "domain_not_found"
  | "no_mail_server"
  | "null_mx"
  | "dns_error"
  | "suppressed"
  | "disposable"
  | "role_address";

export interface EmailVerification {
  email: string;
  domain: string;
  verdict: Verdict;
  reasons: VerificationReason[];
  mailExchange: MailExchangeAnswer["kind"];
  mailServers: string[];
  disposable: boolean;
  roleAddress: boolean;
  suppressed: boolean;
}

export interface Verification {
  verify(projectId: string, email: string): Promise<EmailVerification>;
}

/**
 * Local parts that name a function or a system mailbox rather than a person (RFC 2142 and
 * what lists commonly hold). Mail to them is read by whoever is on duty, or by nobody, and
 * they complain and bounce more than personal addresses.
 */
const roleLocalParts: ReadonlySet<string> = new Set([
  "abuse",
  "admin",
  "administrator",
  "billing",
  "careers",
  "contact",
  "enquiries",
  "help",
  "hello",
  "hostmaster",
  "hr",
  "info",
  "inquiries",
  "jobs",
  "legal",
  "mailer-daemon",
  "marketing",
  "newsletter",
  "no-reply",
  "noc",
  "noreply",
  "office",
  "postmaster",
  "press",
  "privacy",
  "root",
  "sales",
  "security",
  "support",
  "team",
  "webmaster",
]);

/** The local part without a `+tag` (sub-addressing): `info+news@` is still info@. */
const isRoleAddress = (email: string): boolean => {
  const local = email.slice(0, email.lastIndexOf("@")).split("+")[0] ?? "";
  return roleLocalParts.has(local);
};

// mailchecker's list of throwaway mail services, kept up to date by its maintainers (tens of thousands of domains).
const disposableDomains = mailchecker.blacklist();

/** The domain or one of its parents is a throwaway mail service (`x.mailinator.com` is too). */
function isDisposableDomain(domain: string): boolean {
  for (let name = domain; name.includes("."); name = name.slice(name.indexOf(".") + 1)) {
    if (disposableDomains.has(name)) return true;
  }
  return false;
}

const exchangeReasons: Partial<Record<MailExchangeAnswer["kind"], VerificationReason>> = {
  "no-domain": "domain_not_found",
  none: "no_mail_server",
  "null-mx": "null_mx",
  "dns-error": "dns_error",
};

const undeliverableReasons: ReadonlySet<VerificationReason> = new Set(["domain_not_found", "no_mail_server", "null_mx", "suppressed"]);

function verdictOf(reasons: readonly VerificationReason[]): Verdict {
  if (reasons.some((reason) => undeliverableReasons.has(reason))) return "undeliverable";
  if (reasons.includes("dns_error")) return "unknown";
  return reasons.length > 0 ? "risky" : "deliverable";
}

/**
 * POST /v1/verify: the domain's mail servers (through DNS_SERVERS), whether it is a throwaway
 * service, whether the address is a role mailbox, and whether this project suppresses it.
 * It never connects to the address's mail servers: probing mailboxes over SMTP gets a sender
 * listed, and catch-all domains accept every address anyway.
 */
export function createVerification(deps: { pool: pg.Pool; lookupMailExchange: MailExchangeLookup }): Verification {
  return {
    async verify(projectId, given) {
      requireProjectId(projectId);
      const email = normaliseAddress(given);
      if (email.length === 0) {
        throw validationFailed("Invalid email: it is required", [{ field: "email", message: "is required", code: "required" }]);
      }
      if (!isEmailAddress(email)) {
        throw validationFailed("Invalid email: it must be an email address", [
          { field: "email", message: "must be an email address", code: "invalid_email", received: JSON.stringify(given) },
        ]);
      }
      const domain = domainOfAddress(email);
      // An internationalised domain is looked up in its ASCII form; one that has none cannot exist.
      const asciiDomain = domainToASCII(domain);
      const [exchange, suppressed] = await Promise.all([
        asciiDomain === "" ? ({ kind: "no-domain" } as const) : deps.lookupMailExchange(asciiDomain),
        suppressedAmong(deps.pool, [{ projectId, toEmail: email }]).then((found) => found.size > 0),
      ]);
      const disposable = isDisposableDomain(asciiDomain || domain);
      const roleAddress = isRoleAddress(email);
      const reasons: VerificationReason[] = [];
      const exchangeReason = exchangeReasons[exchange.kind];
      if (exchangeReason) reasons.push(exchangeReason);
      if (suppressed) reasons.push("suppressed");
      if (disposable) reasons.push("disposable");
      if (roleAddress) reasons.push("role_address");
      return {
        email,
        domain,
        verdict: verdictOf(reasons),
        reasons,
        mailExchange: exchange.kind,
        mailServers: exchange.kind === "mx" || exchange.kind === "implicit" ? exchange.hosts : [],
        disposable,
        roleAddress,
        suppressed,
      };
    },
  };
}
