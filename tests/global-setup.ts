import { createPrivateKey, createPublicKey, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { ensureChromium, ensureInfrastructure, localSecrets } from "@herald/devinfra";
import {
  createTestDatabase,
  freePort,
  migrateAllServices,
  prepareTemplateDatabase,
  type ServiceName,
  type ServiceProcess,
  startStack,
  startTestDnsServer,
  startTestSmtpSink,
  testDnsClient,
} from "@herald/testing";
import type { TestProject } from "vitest/node";
import { testTopicArn } from "../services/delivery/src/test-support/sns-signer.js";
import { testStripePrices, testStripeWebhookSecret } from "./support/stripe.js";
import { webhookReceiverAddress } from "./support/webhook-receiver.js";

export interface HeraldTestContext {
  /** The server's URL: each test file clones its own database from it (createTestDatabase). */
  databaseUrl: string;
  redisUrl: string;
  kafkaBrokers: string[];
  /** The shared stack: every service and the gateway, started once for the whole run. */
  stack: {
    gatewayUrl: string;
    serviceUrls: Record<ServiceName, string>;
    /** Each process's Prometheus endpoint base (METRICS_PORT): `<url>/metrics`. */
    metricsUrls: Record<ServiceName | "gateway", string>;
    databaseUrl: string;
  };
  /** The DNS server the stack's delivery service resolves with (DNS_SERVERS); tests set its records (testDnsClient). */
  dns: { address: string; controlUrl: string };
  /** The SMTP server the stack's delivery service sends to (SMTP_URL); tests read what it caught (testSmtpSinkClient). */
  smtp: { controlUrl: string };
  /** The stack's DKIM_ENCRYPTION_KEY (hex), so that a test can open a stored key. */
  dkimEncryptionKey: string;
  /** The Chromium that playwright-core drives. */
  chromiumPath: string;
  /** The stack's DOMAIN_CHECK_INTERVAL_MS. */
  domainCheckIntervalMs: number;
  /**
   * Where the stack's delivery receives bounces (INBOUND_SMTP_PORT), for return paths of BOUNCE_DOMAIN, and projects' mail
   * for domains whose MX names mxHost (INBOUND_MX_HOST).
   */
  inboundSmtp: { port: number; bounceDomain: string; maxMessageBytes: number; mxHost: string };
  /** The sender of account emails (SYSTEM_EMAIL_FROM) and where its DKIM key is published (its public half is in the test DNS server). */
  systemEmail: { from: string; dkimRecordName: string };
}

declare module "vitest" {
  export interface ProvidedContext {
    herald: HeraldTestContext;
  }
}

/** The DKIM TXT record (RFC 6376 section 3.6.1) of an RSA private key in PEM. */
const dkimRecordOf = (privateKeyPem: string): string =>
  `v=DKIM1; k=rsa; p=${createPublicKey(createPrivateKey(privateKeyPem)).export({ type: "spki", format: "der" }).toString("base64")}`;

/** How long each service may take to serve: a loaded 2-core machine takes well over the default 20 s. */
const stackStartTimeoutMs = Number(process.env.HERALD_STACK_START_TIMEOUT_MS ?? 120_000);

/**
 * Prints, at the end of the run, each shared process that ended before it was stopped and the errors each one logged:
 * a test that waits in vain on a consumer or a loop then shows its cause in the run's own output, where CI keeps it.
 */
async function reportTroubles(processes: readonly ServiceProcess[]): Promise<void> {
  for (const service of processes) {
    const code = await Promise.race([service.exited, new Promise<"running">((resolve) => setImmediate(() => resolve("running")))]);
    const errors = service.errors();
    if (code === "running" && errors.length === 0) continue;
    console.log(
      `[stack] ${service.name}: ${code === "running" ? "running" : `ended early (exit code ${code})`}, ${errors.length} errors logged`,
    );
    for (const line of errors.slice(-10)) console.log(`[stack] ${service.name}: ${line}`);
  }
}

export default async function setup(project: TestProject) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const log = (message: string) => console.log(`[infra] ${message}`);
  const infra = await ensureInfrastructure({ root, log });
  // The dashboard's browser tests (tests/dashboard.browser.test.ts) drive Debian's Chromium.
  const chromiumPath = ensureChromium(log);
  await prepareTemplateDatabase({ databaseUrl: infra.databaseUrl, migrate: migrateAllServices });
  const stackDatabase = await createTestDatabase(infra.databaseUrl);
  const urls = { databaseUrl: stackDatabase.databaseUrl, redisUrl: infra.redisUrl, kafkaBrokers: infra.kafkaBrokers };
  const dns = await startTestDnsServer();
  const smtp = await startTestSmtpSink();
  // The secrets production requires, made once and kept in .herald/. Set here, every process inherits them: the stack,
  // the services a test starts itself (spawnService), and the test files (which sign links with LINK_SIGNING_SECRET, and call the services with INTERNAL_RPC_TOKEN).
  const secrets = localSecrets(root);
  Object.assign(process.env, secrets);
  const dkimEncryptionKey = secrets.DKIM_ENCRYPTION_KEY;
  const operatorToken = `operator-${randomBytes(24).toString("hex")}`;
  process.env.HERALD_TEST_OPERATOR_TOKEN = operatorToken;
  const domainCheckIntervalMs = 1_000;
  const inboundSmtp = {
    port: await freePort(),
    bounceDomain: "bounces.herald.test",
    maxMessageBytes: 256 * 1024,
    mxHost: "mx.herald.test",
  };
  // Account emails come from here, signed with the generated SYSTEM_DKIM_PRIVATE_KEY, whose public half the test DNS server publishes.
  const systemEmail = { from: "accounts@herald.test", dkimRecordName: "herald._domainkey.herald.test" };
  await testDnsClient(dns.controlUrl).setTxt(systemEmail.dkimRecordName, [dkimRecordOf(secrets.SYSTEM_DKIM_PRIVATE_KEY)]);
  const stack = await startStack(
    urls,
    {
      // A cheaper password hash keeps the many sign-ups of the suite fast; production uses the default.
      PASSWORD_SCRYPT_LOG_N: "14",
      // Every test signs in from 127.0.0.1, and the shared Redis remembers failures for an hour, across runs:
      // the per-address backoff would end up refusing the suite itself. tests/login-backoff.test.ts proves it on a gateway of its own.
      LOGIN_FREE_FAILURES_PER_IP: "100000",
      // Likewise every sign-up of the suite comes from 127.0.0.1: tests/gateway-signup-limit.test.ts proves the limit on a gateway of its own.
      SIGNUP_RATE_PER_HOUR: "1000000",
      DNS_SERVERS: dns.address,
      DNS_TIMEOUT_MS: "500",
      DKIM_ENCRYPTION_KEY: dkimEncryptionKey,
      // The background check every second instead of every 5 minutes, so that a test sees it flip a domain.
      DOMAIN_CHECK_INTERVAL_MS: String(domainCheckIntervalMs),
      SMTP_URL: smtp.url,
      // Retries in seconds, not minutes, so that a test sees a deferred email go out.
      SEND_RETRY_BASE_MS: "500",
      SEND_RETRY_MAX_MS: "2000",
      // POST /webhooks/ses hears this topic only (tests/webhooks.test.ts).
      SES_SNS_TOPIC_ARNS: testTopicArn,
      // Emails go out from return paths of this domain, whose bounces tests hand to this port (tests/bounces.test.ts).
      BOUNCE_DOMAIN: inboundSmtp.bounceDomain,
      INBOUND_SMTP_PORT: String(inboundSmtp.port),
      INBOUND_SMTP_MAX_BYTES: String(inboundSmtp.maxMessageBytes),
      // Projects receive mail for their verified domains whose MX names this host (tests/inbound.test.ts).
      INBOUND_MX_HOST: inboundSmtp.mxHost,
      SYSTEM_EMAIL_FROM: `Herald <${systemEmail.from}>`,
      SYSTEM_DKIM_SELECTOR: "herald",
      // Each campaign's fan-out yields after every batch, so that tests/campaigns-turns.test.ts sees the turns whatever the machine's speed.
      CAMPAIGN_FANOUT_TURN_MS: "0",
      // A workflow's one-minute DELAY lasts 0.6 s (tests/workflows-engine.test.ts).
      DELAY_TIME_SCALE: "0.01",
      // WEBHOOK steps may reach the tests' receiver on 127.0.0.2 and no other private address.
      WEBHOOK_ALLOWED_ADDRESSES: webhookReceiverAddress,
      // Outbound webhooks (services/webhooks): the receiver is plain HTTP, retries come after seconds instead of minutes
      // and hours, and the dispatcher looks for due messages five times a second (tests/webhooks-out*.test.ts).
      WEBHOOK_ALLOW_HTTP: "true",
      WEBHOOK_RETRY_SCHEDULE: "0s,1s,2s",
      WEBHOOK_POLL_INTERVAL_MS: "200",
      // POST /webhooks/incoming/stripe verifies with this secret and sets caps from these prices (tests/stripe-webhooks.test.ts).
      STRIPE_WEBHOOK_SECRET: testStripeWebhookSecret,
      STRIPE_PRICE_LIMITS: JSON.stringify(testStripePrices),
      // A project's images may take 40 MB in all, so that a test reaches the quota in a few uploads (tests/upload-quota.test.ts).
      UPLOAD_QUOTA_BYTES_PER_PROJECT: String(40 * 1024 * 1024),
      // The reputation guard judges a project from 40 emails in its window instead of 1,000, so that a test drives one past
      // its thresholds with a few bounces (tests/reputation-guard.test.ts); no other test's project sends 40 with bounces.
      REPUTATION_MIN_VOLUME: "40",
      // POST /operator/projects/:id/reenable takes this token (tests/reputation-guard.test.ts reads it from the environment).
      OPERATOR_TOKEN: operatorToken,
    },
    stackStartTimeoutMs,
  );
  project.provide("herald", {
    databaseUrl: infra.databaseUrl,
    redisUrl: infra.redisUrl,
    kafkaBrokers: infra.kafkaBrokers,
    stack: {
      gatewayUrl: stack.gatewayUrl,
      serviceUrls: stack.serviceUrls,
      metricsUrls: stack.metricsUrls,
      databaseUrl: stackDatabase.databaseUrl,
    },
    dns: { address: dns.address, controlUrl: dns.controlUrl },
    smtp: { controlUrl: smtp.controlUrl },
    dkimEncryptionKey,
    domainCheckIntervalMs,
    inboundSmtp,
    chromiumPath,
    systemEmail,
  });
  return async () => {
    await reportTroubles(stack.processes);
    await stack.stop();
    await dns.stop();
    await smtp.stop();
    await stackDatabase.drop();
    await infra.stop();
  };
}
