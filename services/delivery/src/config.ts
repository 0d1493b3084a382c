import { createPrivateKey } from "node:crypto";
import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import {
  commaSeparated,
  envBoolean,
  httpUrl,
  kafkaSaslCredentials,
  nodeEnv,
  parseConfig,
  renderThreadMemoryMb,
  renderThreads,
  requireInProduction,
  retentionBoundsInOrder,
  retentionEnvironment,
  secretString,
  serviceEnvironment,
} from "@herald/platform";
import { z } from "zod";
import { destinationOverridesSchema } from "./domain/destinations.js";
import { developmentEncryptionKey, parseEncryptionKey } from "./sending-domains/dkim-keys.js";

/** `host:port` or a bare host, where host is an IP address (`[v6]:port` for IPv6 with a port). */
const dnsServer = (entry: string): boolean => {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const [host, port] = bracketed ? [bracketed[1] ?? "", bracketed[2]] : isIP(entry) === 6 ? [entry, undefined] : entry.split(":");
  return isIP(host ?? "") !== 0 && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
};

const domainName = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** `Name <address>` or a bare address, as SYSTEM_EMAIL_FROM takes it. */
export function parseMailbox(value: string): { email: string; name?: string } | undefined {
  const trimmed = value.trim();
  const open = trimmed.lastIndexOf("<");
  const [name, email] =
    open >= 0 && trimmed.endsWith(">") ? [trimmed.slice(0, open).trim(), trimmed.slice(open + 1, -1).trim()] : ["", trimmed];
  const at = email.lastIndexOf("@");
  if (at <= 0 || /[\s<>"]/.test(email) || /[\r\n<>"]/.test(name)) return undefined;
  return { email: email.toLowerCase(), ...(name ? { name } : {}) };
}

/** A PEM as an environment variable carries it: real line breaks, or `\n` escapes (one-line secret stores). */
const pemOf = (value: string): string => (value.includes("\\n") ? value.replaceAll("\\n", "\n") : value).trim();

function isRsaPrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === "rsa";
  } catch {
    return false;
  }
}

const optionalText = z
  .string()
  .optional()
  .transform((value) => value?.trim() || undefined);

const developmentSystemEmailFrom = "Herald <no-reply@herald.localhost>";

const developmentLinkSigningSecret = "herald development link signing secret: not a secret";

/** UPLOAD_MAX_BYTES at most: an image is held in memory whole, in the gateway and here (the gateway's config has the same bound). */
const uploadCeilingBytes = 25 * 1024 * 1024;

export const configSchema = z
  .object({
    ...serviceEnvironment,
    NODE_ENV: nodeEnv,
    /** The gateway's public base URL: tracking, unsubscribe and upload links in emails point there. */
    PUBLIC_URL: httpUrl.default("http://localhost:8080"),
    /** Signs the tokens of tracking and unsubscribe links (at least 32 characters). Required in production. */
    LINK_SIGNING_SECRET: secretString,
    /** Resolvers for domain verification, comma-separated `ip[:port]`; empty uses the system's. */
    DNS_SERVERS: commaSeparated
      .refine((servers) => servers.every(dnsServer), { message: "must be a comma-separated list of ip[:port] ([ipv6]:port)" })
      .default([]),
    /** How long one DNS query waits for an answer (each of DNS_TRIES attempts). */
    DNS_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
    DNS_TRIES: z.coerce.number().int().min(1).max(5).default(2),
    /**
     * How long /v1/send trusts a verified sender domain it looked up: only a bound for a change notification lost on a
     * connection that died unnoticed, since a deleted or unverified domain is forgotten as soon as the change is heard.
     */
    SENDER_DOMAIN_CACHE_TTL_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
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
    SMTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(100).default(20),
    /** Where emails go out: `smtp` (SMTP_URL) or `ses` (AWS SES, SESv2 API; credentials from the standard AWS chain). */
    MAIL_PROVIDER: z.enum(["smtp", "ses"]).default("smtp"),
    /** The region of the SES account, e.g. `eu-west-1`; required with MAIL_PROVIDER=ses. */
    SES_REGION: z
      .string()
      .optional()
      .transform((value) => value?.trim() || undefined),
    /** Another SESv2-compatible endpoint (a VPC endpoint, a stand-in); unset: the region's own. */
    SES_ENDPOINT: httpUrl.optional().or(z.literal("").transform(() => undefined)),
    /** Named on every SES send, so that its event destinations publish deliveries, bounces and complaints. */
    SES_CONFIGURATION_SET: z
      .string()
      .optional()
      .transform((value) => value?.trim() || undefined),
    /**
     * The SNS topics whose messages POST /webhooks/ses accepts (comma-separated ARNs): those
     * SES publishes bounces, complaints and deliveries to. Empty: every message is refused.
     */
    SES_SNS_TOPIC_ARNS: commaSeparated
      .refine((arns) => arns.every((arn) => /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}(\.fifo)?$/.test(arn)), {
        message: "must be SNS topic ARNs, comma-separated",
      })
      .default([]),
    /**
     * The domain of the return paths (the envelope sender, where receivers send bounces): each email
     * goes out from `bounce+<id>-<tag>@BOUNCE_DOMAIN`, and its MX must lead to INBOUND_SMTP_PORT of
     * delivery. Unset: emails go out from their From address and only the relay's own refusals are seen.
     */
    BOUNCE_DOMAIN: z
      .string()
      .optional()
      .transform((value) => value?.trim().toLowerCase() || undefined)
      .refine((value) => value === undefined || /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(value), {
        message: "must be a domain name",
      }),
    /** Where delivery receives the bounces and feedback reports sent to BOUNCE_DOMAIN; unset: not at all. */
    INBOUND_SMTP_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
    /** The largest report INBOUND_SMTP_PORT accepts; some return the whole original message. */
    INBOUND_SMTP_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .default(10 * 1024 * 1024),
    /** Open connections INBOUND_SMTP_PORT holds, all clients together; more are refused with 421. */
    INBOUND_SMTP_MAX_CLIENTS: z.coerce.number().int().min(1).max(100_000).default(200),
    /**
     * Open connections one client (an address, an IPv6 /64) may hold to INBOUND_SMTP_PORT: its share of
     * INBOUND_SMTP_MAX_CLIENTS, at most all of them. More are refused with 421.
     */
    INBOUND_SMTP_MAX_CONNECTIONS_PER_IP: z.coerce.number().int().min(1).max(100_000).default(5),
    /**
     * Bytes of messages INBOUND_SMTP_PORT holds in memory at once, all clients together; a message that would go past
     * it is refused with 452, and its sender tries again later. At least INBOUND_SMTP_MAX_BYTES.
     */
    INBOUND_SMTP_BUFFER_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .default(64 * 1024 * 1024),
    /**
     * The attachments of one email together, decoded (SPEC.md: 10 MB by default). At most 28 MB, so that an email
     * with them, base64-encoded, stays within the 40 MB a message may have; 0 refuses attachments.
     */
    SEND_ATTACHMENTS_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .max(28 * 1024 * 1024)
      .default(10 * 1024 * 1024),
    /** Emails one dispatcher hands to the provider at once. */
    SEND_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(100),
    /**
     * Worker threads that build and DKIM-sign outgoing messages (1 to 3 ms of CPU each, by machine); 0 builds them on
     * the event loop. Default: as many as the cores this process may use (the event loop's own share is small
     * once the sends' statements are cheap; docs/benchmarks.md, 2026-11-25 night).
     */
    SEND_BUILD_THREADS: z.coerce.number().int().min(0).max(64).default(availableParallelism()),
    RENDER_THREADS: renderThreads,
    RENDER_THREAD_MEMORY_MB: renderThreadMemoryMb,
    /** Emails a second one dispatcher sends, all projects together. */
    SEND_RATE_PER_SECOND: z.coerce.number().min(0.1).default(2_000),
    /** Emails a second one dispatcher sends for one project. */
    SEND_PROJECT_RATE_PER_SECOND: z.coerce.number().min(0.1).default(1_000),
    /**
     * The share of SEND_CONCURRENCY and of SEND_RATE_PER_SECOND that campaign mail may not take: kept for transactional
     * and workflow mail (the urgent lane), so that they never wait behind a campaign (docs/operations.md "Lanes").
     */
    SEND_URGENT_SHARE: z.coerce.number().min(0).max(0.9).default(0.2),
    /**
     * Limits per destination (a mailbox provider's MX group), laid over the default table of docs/operations.md
     * "Destinations": a JSON object of groups, `{"google": {"mx": ["*.google.com"], "concurrency": 20, "ratePerSecond": 50},
     * "default": {"concurrency": 20, "ratePerSecond": 100}}`; a group set to null is removed. Empty: the default table.
     */
    SEND_DESTINATIONS: z
      .string()
      .optional()
      .transform((value, context) => {
        if (!value?.trim()) return {};
        try {
          return JSON.parse(value) as unknown;
        } catch {
          context.addIssue({ code: "custom", message: "must be a JSON object" });
          return z.NEVER;
        }
      })
      .pipe(destinationOverridesSchema),
    /** How long a destination is left alone after a temporary refusal (421, 451): doubled for each further one in a row, up to 16 times. */
    SEND_DESTINATION_BACKOFF_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
    /** How long a recipient domain's MX (its destination) is remembered. */
    SEND_MX_CACHE_MS: z.coerce.number().int().min(1_000).default(600_000),
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
    /** The largest image POST /uploads/image keeps; the gateway's UPLOAD_MAX_BYTES should be the same. */
    UPLOAD_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(1)
      .max(uploadCeilingBytes)
      .default(5 * 1024 * 1024),
    /** The bytes of images one project may keep stored in all (POST /uploads/image answers 413 UPLOAD_QUOTA_EXCEEDED past it); 1 GiB by default. */
    UPLOAD_QUOTA_BYTES_PER_PROJECT: z.coerce
      .number()
      .int()
      .min(1)
      .default(1024 * 1024 * 1024),
    /** Where images are kept when no S3 bucket is set: <checkout>/.herald/uploads (services/delivery/{src,dist}/ is 3 levels down). */
    UPLOADS_DIR: z
      .string()
      .min(1)
      .default(join(import.meta.dirname, "..", "..", "..", ".herald", "uploads")),
    /** Keeps images in this S3 bucket instead of UPLOADS_DIR; credentials from the standard AWS environment. */
    UPLOADS_S3_BUCKET: z
      .string()
      .optional()
      .transform((value) => value?.trim() || undefined),
    /** An S3-compatible endpoint (MinIO, R2, …); unset: AWS S3. */
    UPLOADS_S3_ENDPOINT: httpUrl.optional().or(z.literal("").transform(() => undefined)),
    /** Unset: AWS_REGION (the SDK's own lookup). */
    UPLOADS_S3_REGION: z
      .string()
      .optional()
      .transform((value) => value?.trim() || undefined),
    /** Bucket in the path instead of the host name; most S3-compatible stores need it. */
    UPLOADS_S3_FORCE_PATH_STYLE: envBoolean(false),
    /** Prepended to every key, e.g. `herald/`, when the bucket holds other things too. */
    UPLOADS_S3_PREFIX: z.string().default(""),
    /**
     * The sender of account emails (verification, password reset, invitation): `Name <address>` or an address.
     * Unset: account emails are not sent (development and test: Herald <no-reply@herald.localhost>).
     */
    SYSTEM_EMAIL_FROM: optionalText.refine((value) => value === undefined || parseMailbox(value) !== undefined, {
      message: "must be an email address, or Name <address>",
    }),
    /** The d= of account emails' DKIM signature; unset: the domain of SYSTEM_EMAIL_FROM. */
    SYSTEM_DKIM_DOMAIN: optionalText.refine((value) => value === undefined || domainName.test(value.toLowerCase()), {
      message: "must be a domain name",
    }),
    /** The selector: the public key is published at <selector>._domainkey.<SYSTEM_DKIM_DOMAIN>. */
    SYSTEM_DKIM_SELECTOR: z
      .string()
      .trim()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i, { message: "must be a DNS label" })
      .default("herald"),
    /** The RSA private key (PEM; `\n` escapes are read as line breaks) that signs account emails. Unset: none is sent. */
    SYSTEM_DKIM_PRIVATE_KEY: optionalText.refine((value) => value === undefined || isRsaPrivateKey(pemOf(value)), {
      message: "must be an RSA private key in PEM",
    }),
    /**
     * The host name receivers reach INBOUND_SMTP_PORT at: a project receives mail for a verified domain (or a
     * subdomain of one) whose MX names this host, once it switched receiving on. Unset: no project receives mail.
     */
    INBOUND_MX_HOST: optionalText.refine((value) => value === undefined || domainName.test(value.toLowerCase().replace(/\.$/, "")), {
      message: "must be a host name",
    }),
    /** Messages one project may receive a minute, per delivery process; past it senders are told to try later (451). */
    INBOUND_PROJECT_MESSAGES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
    /** Recipients one received message may have; more are refused (452), as RFC 5321 lets a server do. */
    INBOUND_MAX_RECIPIENTS: z.coerce.number().int().min(1).max(1_000).default(50),
    /** How long whether a domain's MX names INBOUND_MX_HOST is remembered. */
    INBOUND_MX_CACHE_MS: z.coerce.number().int().min(0).default(60_000),
    /** Email content (HTML, headers, attachments): RETENTION_EMAIL_CONTENT_DAYS for a project without its own (docs/operations.md "Retention"). */
    ...retentionEnvironment("EMAIL_CONTENT", { defaultDays: 90, minDays: 1, maxDays: 730 }),
    /** The activity and the email records (metadata and counters). */
    ...retentionEnvironment("ACTIVITY", { defaultDays: 730, minDays: 1, maxDays: 730 }),
    /** How often activity partitions are maintained and expired content, activity and emails removed; a changed window runs a pass at once. */
    RETENTION_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  })
  .superRefine((config, context) => {
    retentionBoundsInOrder(["EMAIL_CONTENT", "ACTIVITY"])(config, context);
    if (config.RETENTION_EMAIL_CONTENT_DAYS > config.RETENTION_ACTIVITY_DAYS) {
      context.addIssue({
        code: "custom",
        path: ["RETENTION_EMAIL_CONTENT_DAYS"],
        message: "must be at most RETENTION_ACTIVITY_DAYS: content expires before the email's record",
      });
    }
    if (config.MAIL_PROVIDER === "ses" && !config.SES_REGION) {
      context.addIssue({ code: "custom", path: ["SES_REGION"], message: "is required when MAIL_PROVIDER=ses" });
    }
    if (config.INBOUND_SMTP_BUFFER_BYTES < config.INBOUND_SMTP_MAX_BYTES) {
      context.addIssue({ code: "custom", path: ["INBOUND_SMTP_BUFFER_BYTES"], message: "must be at least INBOUND_SMTP_MAX_BYTES" });
    }
    if (config.INBOUND_SMTP_MAX_CONNECTIONS_PER_IP > config.INBOUND_SMTP_MAX_CLIENTS) {
      context.addIssue({
        code: "custom",
        path: ["INBOUND_SMTP_MAX_CONNECTIONS_PER_IP"],
        message: "must be at most INBOUND_SMTP_MAX_CLIENTS",
      });
    }
    if (config.INBOUND_SMTP_PORT !== undefined && !config.BOUNCE_DOMAIN) {
      context.addIssue({ code: "custom", path: ["BOUNCE_DOMAIN"], message: "is required with INBOUND_SMTP_PORT" });
    }
    if (config.SEND_TIMEOUT_MS * 2 > config.SEND_LEASE_MS) {
      context.addIssue({ code: "custom", path: ["SEND_LEASE_MS"], message: "must be at least twice SEND_TIMEOUT_MS" });
    }
    requireInProduction(["LINK_SIGNING_SECRET", "DKIM_ENCRYPTION_KEY"] as const)(config, context);
    kafkaSaslCredentials(config, context);
  })
  .transform(({ DKIM_ENCRYPTION_KEY, LINK_SIGNING_SECRET, SYSTEM_DKIM_PRIVATE_KEY, ...config }) => ({
    ...config,
    /** Who account emails come from and the key that signs them; undefined: account emails are not sent. */
    systemSender: systemSenderOf(config, SYSTEM_DKIM_PRIVATE_KEY),
    inboundMxHost: config.INBOUND_MX_HOST?.toLowerCase().replace(/\.$/, ""),
    // Only with NODE_ENV=development or test: a fixed, publicly known secret, like the DKIM key below.
    linkSigningSecret: LINK_SIGNING_SECRET ?? developmentLinkSigningSecret,
    // Only with NODE_ENV=development or test: a fixed, publicly known key: keys survive restarts, and nobody should mistake it for protection.
    dkimEncryptionKey: DKIM_ENCRYPTION_KEY ? (parseEncryptionKey(DKIM_ENCRYPTION_KEY) as Buffer) : developmentEncryptionKey,
    dkimEncryptionKeyIsDevelopment: DKIM_ENCRYPTION_KEY === undefined,
    /** Set when MAIL_PROVIDER=ses: what the SES provider needs. */
    ses:
      config.MAIL_PROVIDER === "ses" && config.SES_REGION
        ? { region: config.SES_REGION, endpoint: config.SES_ENDPOINT, configurationSet: config.SES_CONFIGURATION_SET }
        : undefined,
  }));

function systemSenderOf(
  config: {
    NODE_ENV: "development" | "test" | "production";
    SYSTEM_EMAIL_FROM?: string | undefined;
    SYSTEM_DKIM_DOMAIN?: string | undefined;
    SYSTEM_DKIM_SELECTOR: string;
  },
  privateKey: string | undefined,
) {
  const from = parseMailbox(config.SYSTEM_EMAIL_FROM ?? (config.NODE_ENV === "production" ? "" : developmentSystemEmailFrom));
  if (!from || !privateKey) return undefined;
  return {
    from,
    dkim: {
      domainName: (config.SYSTEM_DKIM_DOMAIN ?? from.email.slice(from.email.lastIndexOf("@") + 1)).toLowerCase(),
      keySelector: config.SYSTEM_DKIM_SELECTOR,
      privateKey: pemOf(privateKey),
    },
  };
}

export type Config = z.infer<typeof configSchema>;

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => parseConfig(configSchema, env);
