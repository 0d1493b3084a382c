import { isIP } from "node:net";
import { parseConfig, serviceEnvironment } from "@herald/platform";
import { z } from "zod";
import { developmentEncryptionKey, parseEncryptionKey } from "./domains/dkim-keys.js";

/** `host:port` or a bare host, where host is an IP address (`[v6]:port` for IPv6 with a port). */
const dnsServer = (entry: string): boolean => {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const [host, port] = bracketed ? [bracketed[1] ?? "", bracketed[2]] : isIP(entry) === 6 ? [entry, undefined] : entry.split(":");
  return isIP(host ?? "") !== 0 && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
};

export const configSchema = z
  .object({
    ...serviceEnvironment,
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
    /** Resolvers for domain verification, comma-separated `ip[:port]`; empty uses the system's. */
    DNS_SERVERS: z
      .string()
      .default("")
      .transform((value) =>
        value
          .split(",")
          .map((entry) => entry.trim())
          .filter(Boolean),
      )
      .refine((servers) => servers.every(dnsServer), { message: "must be a comma-separated list of ip[:port] ([ipv6]:port)" }),
    /** How long one DNS query waits for an answer (each of DNS_TRIES attempts). */
    DNS_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
    DNS_TRIES: z.coerce.number().int().min(1).max(5).default(2),
    /** How often every domain is checked again in the background (SPEC.md: every 5 minutes). */
    DOMAIN_CHECK_INTERVAL_MS: z.coerce.number().int().min(100).default(300_000),
    /** Encrypts DKIM private keys at rest: 32 bytes as 64 hex digits or base64. Required in production. */
    DKIM_ENCRYPTION_KEY: z
      .string()
      .optional()
      .transform((value) => value || undefined)
      .refine((value) => value === undefined || parseEncryptionKey(value) !== undefined, {
        message: "must be 32 bytes, as 64 hex digits or base64",
      }),
    /** An `include:` the recommended SPF record names, e.g. your relay's (`amazonses.com`); unset: `a mx`. */
    SPF_INCLUDE: z
      .string()
      .optional()
      .transform((value) => value?.trim() || undefined)
      .refine((value) => value === undefined || /^[a-z0-9.-]+$/i.test(value), { message: "must be a domain name" }),
    /** The outgoing relay, `smtp://user:pass@host:port` or `smtps://…`; unset: nothing is sent and emails wait PENDING. */
    SMTP_URL: z
      .string()
      .optional()
      .transform((value) => value?.trim() || undefined)
      .refine((value) => value === undefined || /^smtps?:\/\/[^\s]+$/.test(value), { message: "must be an smtp:// or smtps:// URL" }),
    /** Connections the SMTP provider keeps open to the relay, per process. */
    SMTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(100).default(5),
    /** Emails one dispatcher hands to the provider at once. */
    SEND_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(20),
    /** Emails a second one dispatcher sends, all projects together. */
    SEND_RATE_PER_SECOND: z.coerce.number().min(0.1).default(2_000),
    /** Emails a second one dispatcher sends for one project. */
    SEND_PROJECT_RATE_PER_SECOND: z.coerce.number().min(0.1).default(1_000),
    /** How long a claimed email is reserved to its dispatcher: one that dies mid-send is replaced after this. */
    SEND_LEASE_MS: z.coerce.number().int().min(1_000).default(120_000),
    /** One send to the provider, waiting for a pooled connection included; kept well inside the lease. */
    SEND_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
    /** Attempts at one email (temporary failures) before it is FAILED. */
    SEND_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
    /** The wait after the first temporary failure, doubled after each further one up to SEND_RETRY_MAX_MS (with jitter). */
    SEND_RETRY_BASE_MS: z.coerce.number().int().min(1).default(30_000),
    SEND_RETRY_MAX_MS: z.coerce.number().int().min(1).default(3_600_000),
    /** How often an idle dispatcher looks for due emails; an enqueue in the same process wakes it at once. */
    SEND_POLL_INTERVAL_MS: z.coerce.number().int().min(10).default(250),
  })
  .superRefine((config, context) => {
    if (config.SEND_TIMEOUT_MS * 2 > config.SEND_LEASE_MS) {
      context.addIssue({ code: "custom", path: ["SEND_LEASE_MS"], message: "must be at least twice SEND_TIMEOUT_MS" });
    }
    if (config.NODE_ENV === "production" && !config.DKIM_ENCRYPTION_KEY) {
      context.addIssue({ code: "custom", path: ["DKIM_ENCRYPTION_KEY"], message: "is required when NODE_ENV=production" });
    }
  })
  .transform(({ DKIM_ENCRYPTION_KEY, ...config }) => ({
    ...config,
    // Outside production a fixed, publicly known key: keys survive restarts, and nobody should mistake it for protection.
    dkimEncryptionKey: DKIM_ENCRYPTION_KEY ? (parseEncryptionKey(DKIM_ENCRYPTION_KEY) as Buffer) : developmentEncryptionKey,
    dkimEncryptionKeyIsDevelopment: DKIM_ENCRYPTION_KEY === undefined,
  }));

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
