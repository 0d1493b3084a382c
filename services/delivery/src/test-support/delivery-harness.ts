import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import { createSqlPool } from "@herald/db";
import { createLogger, createRpcClient, createRpcTransport, type RpcServer } from "@herald/platform";
import { ServiceInfoSchema } from "@herald/proto/herald/common/v1/service_info_pb";
import { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { ProviderEventsService } from "@herald/proto/herald/delivery/v1/provider_events_service_pb";
import { EmailActivitySchema } from "@herald/proto/herald/events/v1/email_activity_pb";
import { createRenderPool } from "@herald/rendering/pool";
import {
  createTestDatabase,
  type PublishedEvent,
  publishedEvents,
  startTestSmtpSink,
  type TestDatabase,
  type TestSmtpSink,
} from "@herald/testing";
import type pg from "pg";
import { createEmailRetentionSettings, type EmailRetentionSettings } from "../activity/retention.js";
import { createDb, type Db } from "../db/client.js";
import { createClaimsPool } from "../db/emails.js";
import { createOutcomesPool } from "../db/outcomes.js";
import { createAddressHash } from "../domain/address-hash.js";
import { createDestinations } from "../emails/destinations.js";
import { createDispatcher, type Dispatcher, type DispatcherOptions, type EnqueueClaims, noClaims } from "../emails/dispatcher.js";
import { createEmails } from "../emails/emails.js";
import { createEmailEventRecorder } from "../feedback/email-events.js";
import { createSesNotifications } from "../feedback/ses-notifications.js";
import { createLinkTokens } from "../links/link-tokens.js";
import type { MailProvider } from "../providers/mail-provider.js";
import { createSmtpProvider } from "../providers/smtp-provider.js";
import { encryptPrivateKey, generateDkimKeyPair } from "../sending-domains/dkim-keys.js";
import { createDomains } from "../sending-domains/domains.js";
import { createVerifiedSenderCache } from "../sending-domains/sender-domain.js";
import { createResolver, createTxtLookup } from "../sending-domains/txt-lookup.js";
import { createContactUpserts } from "../sends/contact-upserts.js";
import { createSends } from "../sends/sends.js";
import { build } from "../server.js";
import { createTemplates } from "../templates/templates.js";
import { createTracking } from "../tracking/tracking.js";
import { createDomainFactsLookup } from "../verification/domain-facts.js";
import { createVerification } from "../verification/verification.js";
import { createSnsSigner, type SnsSigner, testTopicArn } from "./sns-signer.js";

export const testEncryptionKey = Buffer.alloc(32, 7);

/** Signs the harness's links and keys its suppressions' address hashes. */
export const testLinkSigningSecret = "delivery harness link signing secret, 32+ characters";

const logger = createLogger({ name: "delivery-test", level: "silent" });

export interface VerifiedDomain {
  domain: string;
  selector: string;
  /** The p= of its DKIM record. */
  publicKey: string;
}

export interface DeliveryHarness {
  emails: Client<typeof EmailsService>;
  providerEvents: Client<typeof ProviderEventsService>;
  /** Signs SNS messages with the key the harness's delivery trusts for testTopicArn. */
  sns: SnsSigner;
  /** The SubscribeURLs delivery visited to confirm subscriptions. */
  confirmedSubscriptions: string[];
  db: Db;
  /** The harness's own database (a clone of the migrated template). */
  databaseUrl: string;
  /** The deployment's defaults: content 90 days, activity 730, each from 1 to 730. */
  emailRetention: EmailRetentionSettings;
  sink: TestSmtpSink;
  /** An SMTP provider to the sink, shared by the dispatchers that are not given their own. */
  provider: MailProvider;
  /** A dispatcher on this database, as a replica's would be: the harness starts none by itself. */
  startDispatcher(overrides?: Partial<DispatcherOptions>): Dispatcher;
  /** A sending domain of the project with a DKIM key, verified unless told otherwise. */
  addDomain(projectId: string, options?: { verified?: boolean }): Promise<VerifiedDomain>;
  /** DNS as mailauth asks it: the DKIM records of the domains added here. */
  resolver(name: string, type: string): Promise<string[][]>;
  stop(): Promise<void>;
}

/** Test defaults: short leases and retries so that a test sees a lapse or a backoff in well under a second. */
export const testDispatcherOptions = {
  concurrency: 20,
  ratePerSecond: 100_000,
  projectRatePerSecond: 100_000,
  urgentShare: 0.2,
  leaseMs: 3_000,
  retry: { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 200 },
  pollIntervalMs: 20,
};

/**
 * delivery's build() on a real port, on a database of its own cloned from the migrated
 * template, with a real SMTP sink. Dispatchers start only when a test asks; outbox rows
 * stay in the database for the test to read (nothing relays them).
 */
export async function startDelivery(infra: { databaseUrl: string }): Promise<DeliveryHarness> {
  const database: TestDatabase = await createTestDatabase(infra.databaseUrl);
  const db = createDb(database.databaseUrl, "delivery");
  const pool = createSqlPool(database.databaseUrl, "delivery", () => {});
  const sink = await startTestSmtpSink();
  const provider = createSmtpProvider({ url: sink.url, maxConnections: 5, sendTimeoutMs: 10_000 });
  const dispatchers: Dispatcher[] = [];
  /** Each dispatcher's own connection for its outcomes, as in a process of its own. */
  const dispatcherPools: pg.Pool[] = [];
  const records = new Map<string, string>();
  const keys = await generateDkimKeyPair();

  const addressHash = createAddressHash(testLinkSigningSecret);
  // A process's enqueues store urgent emails claimed by its own dispatcher: here, the earliest started that still runs.
  const running: Dispatcher[] = [];
  const claims: EnqueueClaims = { reserve: (count) => running[0]?.enqueueClaims.reserve(count) ?? noClaims };
  const emails = createEmails({
    db,
    pool,
    addressHash,
    nudgeDispatcher: () => {
      for (const dispatcher of dispatchers) dispatcher.nudge();
    },
    claims,
  });
  const renders = createRenderPool(0);
  // SendEmail and the recipient pages need the contacts service, which this harness does not run: the e2e tests cover them.
  const contacts = createRpcClient(ContactsService, { baseUrl: "http://127.0.0.1:9", retries: 0 });
  const tokens = createLinkTokens(testLinkSigningSecret);
  const templates = createTemplates({ db, renders });
  // Never trusted (no listener): every send asks the database.
  const verifiedSenders = createVerifiedSenderCache(db);
  const sns = createSnsSigner();
  const confirmedSubscriptions: string[] = [];
  // The harness publishes no DNS records: lookups use the system's resolvers and give up fast.
  const resolver = createResolver({ servers: [], timeoutMs: 100, tries: 1 });
  const emailRetention = createEmailRetentionSettings({
    db,
    windows: { content: { defaultDays: 90, minDays: 1, maxDays: 730 }, activity: { defaultDays: 730, minDays: 1, maxDays: 730 } },
    changed: () => {},
  });
  const server: RpcServer = build({
    db,
    logger,
    emailRetention,
    info: create(ServiceInfoSchema, { name: "delivery", version: "test", databaseSchema: "delivery" }),
    domains: createDomains({
      db,
      lookup: createTxtLookup(resolver),
      encryptionKey: testEncryptionKey,
      logger,
      onSenderGone: verifiedSenders.forget,
    }),
    templates,
    emails,
    sends: createSends({
      db,
      renders,
      templates,
      emails,
      upsertContact: createContactUpserts(contacts),
      links: tokens,
      publicUrl: "http://localhost:8080",
      verifiedSenders,
    }),
    tracking: createTracking({ db, tokens, contacts, nudgeOutbox: () => {} }),
    sesNotifications: createSesNotifications({
      events: createEmailEventRecorder({ db, addressHash, nudgeOutbox: () => {} }),
      topicArns: new Set([testTopicArn]),
      certificateOf: async () => sns.publicKey,
      confirm: async (url) => {
        confirmedSubscriptions.push(url.href);
      },
    }),
    verification: createVerification({ pool, addressHash, lookupDomain: createDomainFactsLookup(resolver) }),
  });
  const transport = createRpcTransport({ baseUrl: `http://127.0.0.1:${await server.listen(0, "127.0.0.1")}`, timeoutMs: 60_000 });

  return {
    emails: createClient(EmailsService, transport),
    providerEvents: createClient(ProviderEventsService, transport),
    sns,
    confirmedSubscriptions,
    db,
    databaseUrl: database.databaseUrl,
    emailRetention,
    sink,
    provider,
    startDispatcher(overrides = {}) {
      const outcomesPool = createOutcomesPool(database.databaseUrl, "delivery", () => {});
      const claimsPool = createClaimsPool(database.databaseUrl, "delivery", () => {});
      dispatcherPools.push(outcomesPool, claimsPool);
      const dispatcher = createDispatcher({
        db,
        pool,
        claimsPool,
        addressHash,
        outcomesPool,
        logger,
        provider,
        encryptionKey: testEncryptionKey,
        // No limit a test would meet, unless it brings destinations of its own.
        destinations: createDestinations({
          table: { groups: {}, default: { concurrency: 10_000, ratePerSecond: 1_000_000 } },
          lookupMx: async () => ({ kind: "none" }),
          backoffMs: 50,
          mxCacheMs: 60_000,
        }),
        ...testDispatcherOptions,
        ...overrides,
      });
      dispatchers.push(dispatcher);
      running.push(dispatcher);
      const { stop, kill } = dispatcher;
      const leave = () => {
        const index = running.indexOf(dispatcher);
        if (index !== -1) running.splice(index, 1);
      };
      dispatcher.stop = () => {
        leave();
        return stop();
      };
      dispatcher.kill = () => {
        leave();
        kill();
      };
      dispatcher.start();
      return dispatcher;
    },
    async addDomain(projectId, options = {}) {
      const id = randomUUID();
      const domain = `mail-${id.slice(0, 8)}.example.com`;
      const selector = "herald-test";
      await db.domain.create({
        data: {
          id,
          projectId,
          domain,
          selector,
          publicKey: keys.publicKey,
          privateKeyEncrypted: encryptPrivateKey(testEncryptionKey, keys.privateKeyPem, id),
          verified: options.verified ?? true,
          dkimStatus: options.verified === false ? "pending" : "verified",
        },
      });
      records.set(`${selector}._domainkey.${domain}`, keys.publicKey);
      return { domain, selector, publicKey: keys.publicKey };
    },
    async resolver(name, type) {
      const publicKey = records.get(name.toLowerCase());
      if (type === "TXT" && publicKey) return [[`v=DKIM1; k=rsa; p=${publicKey}`]];
      throw Object.assign(new Error(`no ${type} record at ${name}`), { code: "ENOTFOUND" });
    },
    async stop() {
      await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop()));
      await Promise.all(dispatcherPools.map((dispatcherPool) => dispatcherPool.end()));
      await server.close(100);
      await provider.close();
      await sink.stop();
      await db.$disconnect();
      await pool.end();
      await database.drop();
    },
  };
}

export type PublishedEmailActivity = PublishedEvent<typeof EmailActivitySchema>;

/** What the outbox holds for a project, oldest first, decoded as the relay would publish it. */
export const emailActivityOf = async (db: Db, projectId: string): Promise<PublishedEmailActivity[]> =>
  publishedEvents(await db.outboxEvent.findMany({ orderBy: { id: "asc" } }), projectId, EmailActivitySchema);

export { eventually } from "@herald/testing";

export const newProjectId = () => randomUUID();

export const randomRecipient = (label = "rcpt") => `${label}-${randomUUID()}@example.org`;
