import { generateKeyPairSync } from "node:crypto";
import { availableParallelism } from "node:os";
import { ConfigError, retentionWindowOf } from "@herald/platform";
import { describe, expect, it } from "vitest";
import { loadConfig as loadEnvironment } from "./config.js";
import { developmentEncryptionKey } from "./sending-domains/dkim-keys.js";

/** NODE_ENV=test unless given: an unset NODE_ENV means production, which requires the secrets. */
const loadConfig = (env: NodeJS.ProcessEnv) => loadEnvironment({ NODE_ENV: "test", ...env });

describe("delivery configuration", () => {
  it("reads the retention windows with their bounds, refusing a default outside them or content kept longer than activity", () => {
    const config = loadConfig({});
    expect(retentionWindowOf(config, "EMAIL_CONTENT")).toEqual({ defaultDays: 90, minDays: 1, maxDays: 730 });
    expect(retentionWindowOf(config, "ACTIVITY")).toEqual({ defaultDays: 730, minDays: 1, maxDays: 730 });
    expect(config.RETENTION_INTERVAL_MS).toBe(3_600_000);
    const shorter = loadConfig({ RETENTION_ACTIVITY_DAYS: "60", RETENTION_ACTIVITY_MAX_DAYS: "365", RETENTION_EMAIL_CONTENT_DAYS: "30" });
    expect(retentionWindowOf(shorter, "ACTIVITY")).toEqual({ defaultDays: 60, minDays: 1, maxDays: 365 });
    expect(() => loadConfig({ RETENTION_ACTIVITY_DAYS: "800" })).toThrow(/RETENTION_ACTIVITY_DAYS: must lie within/);
    expect(() => loadConfig({ RETENTION_ACTIVITY_MIN_DAYS: "0" })).toThrow(/RETENTION_ACTIVITY_MIN_DAYS/);
    expect(() => loadConfig({ RETENTION_EMAIL_CONTENT_DAYS: "100", RETENTION_ACTIVITY_DAYS: "60" })).toThrow(
      /RETENTION_EMAIL_CONTENT_DAYS: must be at most RETENTION_ACTIVITY_DAYS/,
    );
    expect(() => loadConfig({ RETENTION_EMAIL_CONTENT_DAYS: "ninety" })).toThrow(/RETENTION_EMAIL_CONTENT_DAYS/);
  });

  it("reads DNS_SERVERS as ip[:port] entries and the domain check's interval, 5 minutes by default", () => {
    const config = loadConfig({ DNS_SERVERS: "127.0.0.1:5353, 10.0.0.2,[::1]:53,::1" });
    expect(config.DNS_SERVERS).toEqual(["127.0.0.1:5353", "10.0.0.2", "[::1]:53", "::1"]);
    expect(config.DOMAIN_CHECK_INTERVAL_MS).toBe(300_000);
    expect(loadConfig({}).DNS_SERVERS).toEqual([]);
    expect(() => loadConfig({ DNS_SERVERS: "dns.example.com:53" })).toThrow(/DNS_SERVERS/);
    expect(() => loadConfig({ DNS_SERVERS: "127.0.0.1:99999" })).toThrow(/DNS_SERVERS/);
  });

  it("takes DKIM_ENCRYPTION_KEY as 32 bytes, requires it in production and uses the development key elsewhere", () => {
    const hex = "ab".repeat(32);
    expect(loadConfig({ DKIM_ENCRYPTION_KEY: hex }).dkimEncryptionKey).toEqual(Buffer.from(hex, "hex"));
    expect(loadConfig({}).dkimEncryptionKey).toEqual(developmentEncryptionKey);
    expect(loadConfig({}).dkimEncryptionKeyIsDevelopment).toBe(true);
    expect(() => loadConfig({ DKIM_ENCRYPTION_KEY: "short" })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(/DKIM_ENCRYPTION_KEY: is required/);
    // Unset means production: no fallback.
    expect(() => loadEnvironment({})).toThrow(/DKIM_ENCRYPTION_KEY: is required/);
    expect(() => loadEnvironment({})).toThrow(/LINK_SIGNING_SECRET: is required/);
    const secret = "s".repeat(32);
    expect(
      loadConfig({ NODE_ENV: "production", DKIM_ENCRYPTION_KEY: hex, LINK_SIGNING_SECRET: secret }).dkimEncryptionKeyIsDevelopment,
    ).toBe(false);
  });

  it("signs links with LINK_SIGNING_SECRET, required in production, of at least 32 characters", () => {
    const hex = "ab".repeat(32);
    expect(loadConfig({ LINK_SIGNING_SECRET: "x".repeat(32) }).linkSigningSecret).toBe("x".repeat(32));
    expect(loadConfig({}).linkSigningSecret.length).toBeGreaterThanOrEqual(32);
    expect(() => loadConfig({ LINK_SIGNING_SECRET: "short" })).toThrow(/LINK_SIGNING_SECRET: must be at least 32 characters/);
    expect(() => loadConfig({ NODE_ENV: "production", DKIM_ENCRYPTION_KEY: hex })).toThrow(/LINK_SIGNING_SECRET: is required/);
  });

  it("reads the send queue's settings, and refuses a bad SMTP_URL or a lease shorter than two send timeouts", () => {
    const config = loadConfig({});
    expect(config.SMTP_URL).toBeUndefined();
    expect(config).toMatchObject({
      SEND_CONCURRENCY: 100,
      SMTP_MAX_CONNECTIONS: 20,
      SEND_LEASE_MS: 120_000,
      SEND_TIMEOUT_MS: 60_000,
      SEND_MAX_ATTEMPTS: 8,
    });
    expect(loadConfig({ SMTP_URL: "smtp://user:pass@relay.example:587" }).SMTP_URL).toBe("smtp://user:pass@relay.example:587");
    expect(() => loadConfig({ SMTP_URL: "http://relay.example" })).toThrow(/SMTP_URL/);
    expect(() => loadConfig({ SEND_LEASE_MS: "60000" })).toThrow(/SEND_LEASE_MS: must be at least twice SEND_TIMEOUT_MS/);
    expect(loadConfig({ SEND_LEASE_MS: "5000", SEND_TIMEOUT_MS: "2000" }).SEND_LEASE_MS).toBe(5_000);
  });

  it("keeps a fifth of the send queue for urgent mail, and reads SEND_DESTINATIONS as JSON, stopping on a bad entry", () => {
    expect(loadConfig({})).toMatchObject({ SEND_URGENT_SHARE: 0.2, SEND_DESTINATIONS: {}, SEND_DESTINATION_BACKOFF_MS: 30_000 });
    expect(loadConfig({ SEND_URGENT_SHARE: "0.5" }).SEND_URGENT_SHARE).toBe(0.5);
    expect(() => loadConfig({ SEND_URGENT_SHARE: "1" })).toThrow(/SEND_URGENT_SHARE/);
    const destinations = '{"google": {"mx": ["*.google.com"], "concurrency": 5, "ratePerSecond": 10}, "gmx": null}';
    expect(loadConfig({ SEND_DESTINATIONS: destinations }).SEND_DESTINATIONS).toEqual({
      google: { mx: ["*.google.com"], concurrency: 5, ratePerSecond: 10 },
      gmx: null,
    });
    expect(() => loadConfig({ SEND_DESTINATIONS: "{google" })).toThrow(/SEND_DESTINATIONS: must be a JSON object/);
    expect(() => loadConfig({ SEND_DESTINATIONS: '{"google": {"mx": [], "concurrency": 5, "ratePerSecond": 10}}' })).toThrow(
      /SEND_DESTINATIONS\.google\.mx/,
    );
  });

  it("builds messages on as many threads as there are cores, or on the event loop with 0", () => {
    expect(loadConfig({}).SEND_BUILD_THREADS).toBe(availableParallelism());
    expect(loadConfig({ SEND_BUILD_THREADS: "0" }).SEND_BUILD_THREADS).toBe(0);
    expect(loadConfig({ SEND_BUILD_THREADS: "3" }).SEND_BUILD_THREADS).toBe(3);
    expect(() => loadConfig({ SEND_BUILD_THREADS: "-1" })).toThrow(/SEND_BUILD_THREADS/);
    expect(() => loadConfig({ SEND_BUILD_THREADS: "two" })).toThrow(/SEND_BUILD_THREADS/);
  });

  it("takes attachments of 10 MB an email by default, SEND_ATTACHMENTS_MAX_BYTES up to 28 MB, 0 for none", () => {
    expect(loadConfig({}).SEND_ATTACHMENTS_MAX_BYTES).toBe(10 * 1024 * 1024);
    expect(loadConfig({ SEND_ATTACHMENTS_MAX_BYTES: "0" }).SEND_ATTACHMENTS_MAX_BYTES).toBe(0);
    expect(loadConfig({ SEND_ATTACHMENTS_MAX_BYTES: String(28 * 1024 * 1024) }).SEND_ATTACHMENTS_MAX_BYTES).toBe(28 * 1024 * 1024);
    for (const bad of [String(28 * 1024 * 1024 + 1), "-1", "ten"]) {
      expect(() => loadConfig({ SEND_ATTACHMENTS_MAX_BYTES: bad })).toThrow(/SEND_ATTACHMENTS_MAX_BYTES/);
    }
  });

  it("chooses SMTP by default and SES with MAIL_PROVIDER=ses, which stops without SES_REGION", () => {
    expect(loadConfig({})).toMatchObject({ MAIL_PROVIDER: "smtp", ses: undefined });
    const ses = { MAIL_PROVIDER: "ses", SES_REGION: "eu-west-1", SES_ENDPOINT: "http://127.0.0.1:4566", SES_CONFIGURATION_SET: "herald" };
    expect(loadConfig(ses).ses).toEqual({ region: "eu-west-1", endpoint: "http://127.0.0.1:4566", configurationSet: "herald" });
    expect(loadConfig({ MAIL_PROVIDER: "ses", SES_REGION: "us-east-1" }).ses).toEqual({
      region: "us-east-1",
      endpoint: undefined,
      configurationSet: undefined,
    });
    // SES settings alone do not switch the provider.
    expect(loadConfig({ SES_REGION: "eu-west-1" }).ses).toBeUndefined();
    expect(() => loadConfig({ MAIL_PROVIDER: "ses" })).toThrow(/SES_REGION: is required when MAIL_PROVIDER=ses/);
    expect(() => loadConfig({ MAIL_PROVIDER: "sendgrid" })).toThrow(/MAIL_PROVIDER/);
    expect(() => loadConfig({ MAIL_PROVIDER: "ses", SES_REGION: "eu-west-1", SES_ENDPOINT: "email.eu-west-1" })).toThrow(/SES_ENDPOINT/);
  });

  it("reads SES_SNS_TOPIC_ARNS as a list of SNS topic ARNs, none by default", () => {
    expect(loadConfig({}).SES_SNS_TOPIC_ARNS).toEqual([]);
    const topics = "arn:aws:sns:eu-west-1:123456789012:ses-events, arn:aws-cn:sns:cn-north-1:123456789012:ses-events.fifo";
    expect(loadConfig({ SES_SNS_TOPIC_ARNS: topics }).SES_SNS_TOPIC_ARNS).toEqual([
      "arn:aws:sns:eu-west-1:123456789012:ses-events",
      "arn:aws-cn:sns:cn-north-1:123456789012:ses-events.fifo",
    ]);
    expect(() => loadConfig({ SES_SNS_TOPIC_ARNS: "ses-events" })).toThrow(/SES_SNS_TOPIC_ARNS: must be SNS topic ARNs/);
  });

  it("reads BOUNCE_DOMAIN as a domain, and refuses INBOUND_SMTP_PORT without it", () => {
    const defaults = loadConfig({});
    expect([defaults.BOUNCE_DOMAIN, defaults.INBOUND_SMTP_PORT, defaults.INBOUND_SMTP_MAX_BYTES]).toEqual([
      undefined,
      undefined,
      10 * 1024 * 1024,
    ]);
    expect(loadConfig({ BOUNCE_DOMAIN: " Bounces.Example.com ", INBOUND_SMTP_PORT: "2525" })).toMatchObject({
      BOUNCE_DOMAIN: "bounces.example.com",
      INBOUND_SMTP_PORT: 2525,
    });
    expect(() => loadConfig({ BOUNCE_DOMAIN: "not a domain" })).toThrow(/BOUNCE_DOMAIN: must be a domain name/);
    expect(() => loadConfig({ INBOUND_SMTP_PORT: "2525" })).toThrow(/BOUNCE_DOMAIN: is required with INBOUND_SMTP_PORT/);
    expect(() => loadConfig({ BOUNCE_DOMAIN: "bounces.example.com", INBOUND_SMTP_PORT: "70000" })).toThrow(/INBOUND_SMTP_PORT/);
  });

  it("reads the sender and DKIM key of account emails, and sends none without a key", () => {
    const pem = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const config = loadConfig({
      SYSTEM_EMAIL_FROM: "Herald Accounts <Accounts@Example.com>",
      SYSTEM_DKIM_PRIVATE_KEY: pem.replaceAll("\n", "\\n"),
    });
    expect(config.systemSender).toEqual({
      from: { email: "accounts@example.com", name: "Herald Accounts" },
      dkim: { domainName: "example.com", keySelector: "herald", privateKey: pem.trim() },
    });
    expect(
      loadConfig({ SYSTEM_DKIM_PRIVATE_KEY: pem, SYSTEM_DKIM_DOMAIN: "Mail.Example.com", SYSTEM_DKIM_SELECTOR: "s1" }).systemSender,
    ).toMatchObject({
      from: { email: "no-reply@herald.localhost", name: "Herald" },
      dkim: { domainName: "mail.example.com", keySelector: "s1" },
    });
    expect(loadConfig({}).systemSender).toBeUndefined();
    // In production there is no default sender: account emails wait until one is configured.
    expect(
      loadEnvironment({
        NODE_ENV: "production",
        LINK_SIGNING_SECRET: "x".repeat(32),
        DKIM_ENCRYPTION_KEY: "a".repeat(64),
        SYSTEM_DKIM_PRIVATE_KEY: pem,
      }).systemSender,
    ).toBeUndefined();
    expect(() => loadConfig({ SYSTEM_DKIM_PRIVATE_KEY: "not a key" })).toThrow(
      /SYSTEM_DKIM_PRIVATE_KEY: must be an RSA private key in PEM/,
    );
    expect(() => loadConfig({ SYSTEM_EMAIL_FROM: "Herald <no address>" })).toThrow(/SYSTEM_EMAIL_FROM: must be an email address/);
    expect(() => loadConfig({ INBOUND_MX_HOST: "not a host" })).toThrow(/INBOUND_MX_HOST: must be a host name/);
    expect(loadConfig({ INBOUND_MX_HOST: "MX.Herald.Example." }).inboundMxHost).toBe("mx.herald.example");
  });
});
