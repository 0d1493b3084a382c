import emailSpellChecker from "@zootools/email-spell-checker";

/**
 * The top-level names RFC 6761 and RFC 2606 reserve: `.test` and `.example` for testing and
 * documentation, `.invalid` for names that must not exist, `.localhost` for the loopback.
 */
const specialUseTlds: ReadonlySet<string> = new Set(["test", "example", "invalid", "localhost"]);

/** RFC 2606 section 3's second-level names for documentation. */
const exampleDomains: ReadonlySet<string> = new Set(["example.com", "example.net", "example.org"]);

/** The domain is, or is under, a special-use name (RFC 6761, RFC 2606). */
export function isSpecialUseDomain(domain: string): boolean {
  const labels = domain.toLowerCase().replace(/\.$/, "").split(".");
  const tld = labels.at(-1) ?? "";
  return specialUseTlds.has(tld) || exampleDomains.has(labels.slice(-2).join("."));
}

/**
 * Special-use names that reach nobody: `.invalid` never exists (RFC 6761 6.4) and `.localhost` is the
 * sender's own machine (6.3). They are answered without asking DNS. `.test` and `.example` are looked up
 * like any other name, as RFC 6761 (6.2, 6.5) asks: a deployment's own resolver may serve them.
 */
export function isUnreachableSpecialUse(domain: string): boolean {
  const tld = domain.toLowerCase().replace(/\.$/, "").split(".").at(-1) ?? "";
  return tld === "invalid" || tld === "localhost";
}

/**
 * The mail providers whose near-misses are typos: the spell checker's own list, and the big
 * providers it lacks. A near-miss of one of these wins over a mere swap of the top-level domain
 * (`yahoo.cm` is `yahoo.com`, not `yahoo.co`).
 */
export const providerDomains: readonly string[] = [
  ...new Set([
    ...emailSpellChecker.POPULAR_DOMAINS,
    "yahoo.com",
    "yahoo.co.uk",
    "yahoo.fr",
    "yahoo.de",
    "hotmail.com",
    "hotmail.co.uk",
    "hotmail.fr",
    "outlook.com",
    "live.com",
    "gmx.de",
    "gmx.net",
    "gmx.com",
    "mail.ru",
    "yandex.ru",
    "orange.fr",
    "t-online.de",
  ]),
];

const providers: ReadonlySet<string> = new Set(providerDomains);

/** The part of a domain after its first label: what the spell checker takes as its top-level domain. */
const afterFirstLabel = (domain: string) => domain.slice(domain.indexOf(".") + 1);
const firstLabel = (domain: string) => domain.slice(0, domain.indexOf("."));

/**
 * The domain a mistyped one was likely meant to be, or undefined. `hasMailServers`: the domain's MX
 * records name a mail server. Rules (docs/api-decisions.md "POST /v1/verify"):
 * - a special-use name is never a typo, and never a suggestion;
 * - the nearest well-known provider domain wins over a swap of the top-level domain;
 * - a domain whose MX records name a mail server is not a typo on its top-level domain alone
 *   (`company.test` is not `company.de`); a near-miss of a provider still is (`gmial.com`).
 */
export function suggestDomain(domain: string, hasMailServers: boolean): string | undefined {
  const given = domain.toLowerCase();
  if (isSpecialUseDomain(given)) return undefined;
  const suggested = emailSpellChecker.run({ email: `x@${given}`, domains: [...providerDomains] })?.domain.toLowerCase();
  if (!suggested || suggested === given || isSpecialUseDomain(suggested)) return undefined;
  if (providers.has(suggested)) return suggested;
  const tldAlone = firstLabel(suggested) === firstLabel(given) && afterFirstLabel(suggested) !== afterFirstLabel(given);
  if (tldAlone && hasMailServers) return undefined;
  return suggested;
}
