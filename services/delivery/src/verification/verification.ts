import { domainToASCII } from "node:url";
import { validationFailed } from "@herald/errors";
import freeEmailDomains from "free-email-domains";
import mailchecker from "mailchecker";
import type pg from "pg";
import { standingsOf } from "../db/standings.js";
import type { AddressHash } from "../domain/address-hash.js";
import { domainOfAddress, isEmailAddress, normaliseAddress } from "../domain/email-input.js";
import { requireProjectId } from "../domain/ids.js";
import type { DomainFactsLookup } from "./domain-facts.js";
import { isUnreachableSpecialUse, suggestDomain } from "./domain-suggestion.js";
import type { MailExchangeAnswer } from "./mail-exchange.js";

export type Verdict = "deliverable" | "risky" | "undeliverable" | "unknown";

export type VerificationReason =
  | "domain_not_found"
  | "no_mail_server"
  | "null_mx"
  | "dns_error"
  | "suppressed"
  | "disposable"
  | "role_address"
  | "possible_typo"
  | "special_use_domain";

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
  domainExists: boolean;
  hasMxRecords: boolean;
  hasWebsite: boolean;
  isPersonalEmail: boolean;
  isPlusAddressed: boolean;
  isAlias: boolean;
  isTypo: boolean;
  /** The address with its domain's likely spelling, when the domain looks mistyped. */
  suggestion?: string;
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

const localPartOf = (email: string) => email.slice(0, email.lastIndexOf("@"));

/** The local part without a `+tag` (sub-addressing): `info+news@` is still info@. */
const isRoleAddress = (email: string): boolean => roleLocalParts.has(localPartOf(email).split("+")[0] ?? "");

/** Sub-addressing (RFC 5233): a `+tag` after the mailbox's name, as in `jane+news@`. */
const isPlusAddressed = (email: string): boolean => localPartOf(email).indexOf("+") > 0;

/** Gmail's domains: it ignores dots in the local part, and googlemail.com is gmail.com. */
const gmailDomains: ReadonlySet<string> = new Set(["gmail.com", "googlemail.com"]);

/**
 * Another name of a mailbox that has a plainer one: a plus-addressed local part, or at Gmail
 * a local part with dots (`j.doe@` is `jdoe@`) or the googlemail.com domain.
 */
function isAlias(email: string, domain: string): boolean {
  if (isPlusAddressed(email)) return true;
  return gmailDomains.has(domain) && (domain === "googlemail.com" || localPartOf(email).includes("."));
}

// The free-email-domains package's list of free mail providers (Gmail, Yahoo, GMX...), kept up to date by its maintainers.
const freeDomains: ReadonlySet<string> = new Set(freeEmailDomains);

/** The domain of a free mail provider that anyone can sign up at; throwaway services are not personal addresses. */
const isPersonalDomain = (domain: string, disposable: boolean): boolean => !disposable && freeDomains.has(domain);

/** The address with its domain's likely spelling (`gmial.com` → `gmail.com`, `yahoo.cm` → `yahoo.com`): domain-suggestion.ts. */
function suggestionFor(email: string, domain: string, hasMailServers: boolean): string | undefined {
  const suggested = suggestDomain(domain, hasMailServers);
  return suggested ? `${localPartOf(email)}@${suggested}` : undefined;
}

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

const undeliverableReasons: ReadonlySet<VerificationReason> = new Set([
  "domain_not_found",
  "no_mail_server",
  "null_mx",
  "special_use_domain",
  "suppressed",
]);

function verdictOf(reasons: readonly VerificationReason[]): Verdict {
  if (reasons.some((reason) => undeliverableReasons.has(reason))) return "undeliverable";
  if (reasons.includes("dns_error")) return "unknown";
  return reasons.length > 0 ? "risky" : "deliverable";
}

/**
 * POST /v1/verify: what DNS_SERVERS say of the domain (mail servers, existence, website),
 * whether it is a throwaway service or a free provider, whether its spelling looks mistyped,
 * what its local part says (role mailbox, sub-address, alias), and whether this project
 * suppresses it.
 * It never connects to the address's mail servers: probing mailboxes over SMTP gets a sender
 * listed, and catch-all domains accept every address anyway.
 */
export function createVerification(deps: { pool: pg.Pool; addressHash: AddressHash; lookupDomain: DomainFactsLookup }): Verification {
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
      // `.invalid` and `.localhost` reach nobody (RFC 6761): DNS is not asked about them.
      const unreachable = isUnreachableSpecialUse(asciiDomain || domain);
      const [facts, suppressed] = await Promise.all([
        asciiDomain === ""
          ? { exchange: { kind: "no-domain" } as const, exists: false, hasWebsite: false }
          : unreachable
            ? { exchange: { kind: "none" } as const, exists: false, hasWebsite: false }
            : deps.lookupDomain(asciiDomain),
        standingsOf(deps.pool, deps.addressHash, { recipients: [{ projectId, toEmail: email }] }).then(
          (found) => found.suppressed.size > 0,
        ),
      ]);
      const { exchange } = facts;
      const disposable = isDisposableDomain(asciiDomain || domain);
      const roleAddress = isRoleAddress(email);
      const suggestion = suggestionFor(email, asciiDomain || domain, exchange.kind === "mx");
      const reasons: VerificationReason[] = [];
      const exchangeReason = unreachable ? "special_use_domain" : exchangeReasons[exchange.kind];
      if (exchangeReason) reasons.push(exchangeReason);
      if (suppressed) reasons.push("suppressed");
      if (disposable) reasons.push("disposable");
      if (roleAddress) reasons.push("role_address");
      if (suggestion) reasons.push("possible_typo");
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
        domainExists: facts.exists,
        hasMxRecords: exchange.kind === "mx",
        hasWebsite: facts.hasWebsite,
        isPersonalEmail: isPersonalDomain(asciiDomain || domain, disposable),
        isPlusAddressed: isPlusAddressed(email),
        isAlias: isAlias(email, domain),
        isTypo: suggestion !== undefined,
        ...(suggestion ? { suggestion } : {}),
      };
    },
  };
}
