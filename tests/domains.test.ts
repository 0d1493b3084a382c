import { createPublicKey, createSign, createVerify, randomUUID } from "node:crypto";
import { testDnsClient } from "@herald/testing";
import pg from "pg";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { decryptPrivateKey } from "../services/delivery/src/sending-domains/dkim-keys.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, dkimEncryptionKey, domainCheckIntervalMs } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

type DnsRecord = {
  type: "TXT";
  name: string;
  value: string;
  status: "pending" | "verified" | "failed";
  purpose: string;
  required: boolean;
};
type Domain = {
  id: string;
  projectId: string;
  domain: string;
  verified: boolean;
  status: "verified" | "pending";
  records: DnsRecord[];
  checkedAt: string | null;
  verifiedAt: string | null;
  createdAt: string;
  updatedAt: string;
};

/** A name under .test (RFC 2606): each test its own, as the DNS server is shared by the whole run. */
const uniqueDomain = (label: string) => `${label}-${randomUUID().slice(0, 8)}.herald.test`;

const recordOf = (domain: Domain, purpose: string): DnsRecord => {
  const record = domain.records.find((candidate) => candidate.purpose === purpose);
  if (!record) throw new Error(`no ${purpose} record in ${JSON.stringify(domain)}`);
  return record;
};

async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("sending domains through the REST API", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;

  beforeAll(async () => {
    owner = await signUp(call, "domains");
    project = await createProject(call, owner.cookie, "Domains");
    other = await createProject(call, (await signUp(call, "domains-other")).cookie, "Other");
    key = project.secretKey;
  });

  const addDomain = (domain: unknown, k = key) => call<Domain & ErrorBody>("POST", "/domains", { key: k, body: { domain } });
  const listDomains = (projectId = project.id, k = key) => call<Domain[] & ErrorBody>("GET", `/domains/project/${projectId}`, { key: k });
  const verify = (id: string, k = key) => call<Domain & ErrorBody>("GET", `/domains/${id}/verify`, { key: k });

  it("adds a domain with a fresh DKIM key and answers the records to publish, nothing verified", async () => {
    const name = uniqueDomain("create");
    const created = await addDomain(`  ${name.toUpperCase()}. `);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.any(String), projectId: project.id, domain: name, verified: false, status: "pending" });
    expect(created.body.records).toHaveLength(3);
    const dkim = recordOf(created.body, "dkim");
    expect(dkim).toMatchObject({ type: "TXT", status: "pending", required: true });
    expect(dkim.name).toMatch(new RegExp(`^[a-z0-9-]+\\._domainkey\\.${name.replaceAll(".", "\\.")}$`));
    const p = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/=]+)$/.exec(dkim.value)?.[1] ?? "";
    const publicKey = createPublicKey({ key: Buffer.from(p, "base64"), format: "der", type: "spki" });
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(recordOf(created.body, "spf")).toMatchObject({ type: "TXT", name, status: "pending", required: false });
    expect(recordOf(created.body, "spf").value).toMatch(/^v=spf1 .+ ~all$/);
    expect(recordOf(created.body, "dmarc")).toMatchObject({ type: "TXT", name: `_dmarc.${name}`, status: "pending", required: false });
    expect(recordOf(created.body, "dmarc").value).toMatch(/^v=DMARC1;/);

    // Each domain gets its own key.
    const second = await addDomain(uniqueDomain("create"));
    expect(recordOf(second.body, "dkim").value).not.toBe(dkim.value);

    const listed = await listDomains();
    expect(listed.status).toBe(200);
    expect(listed.body.map((domain) => domain.id)).toEqual(expect.arrayContaining([created.body.id, second.body.id]));
    expect(listed.body.find((domain) => domain.id === created.body.id)).toMatchObject({
      domain: name,
      verified: false,
      records: expect.any(Array),
    });
  });

  it("verifies once the DKIM record is published, and goes back to pending when it disappears", async () => {
    const name = uniqueDomain("verify");
    const created = (await addDomain(name)).body;
    const dkim = recordOf(created, "dkim");

    const before = await verify(created.id);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ verified: false, status: "pending" });
    expect(before.body.checkedAt).not.toBeNull();

    // A DKIM record with another key is there but wrong.
    await dns.setTxt(dkim.name, ["v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrong"]);
    const wrong = await verify(created.id);
    expect(wrong.body.verified).toBe(false);
    expect(recordOf(wrong.body, "dkim").status).toBe("failed");

    // The published value is longer than one TXT string: the server splits it, verification joins it.
    await dns.setTxt(dkim.name, [dkim.value]);
    const verified = await verify(created.id);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ id: created.id, domain: name, verified: true, status: "verified" });
    expect(recordOf(verified.body, "dkim").status).toBe("verified");
    expect(recordOf(verified.body, "spf").status).toBe("pending");
    expect(recordOf(verified.body, "dmarc").status).toBe("pending");
    expect(verified.body.verifiedAt).not.toBeNull();

    await dns.setTxt(name, ["some-site-verification=abc", recordOf(created, "spf").value]);
    await dns.setTxt(`_dmarc.${name}`, ["v=DMARC1; p=quarantine; rua=mailto:dmarc@example.com"]);
    const complete = await verify(created.id);
    expect(complete.body.records.map((record) => record.status)).toEqual(["verified", "verified", "verified"]);

    // The background check (every DOMAIN_CHECK_INTERVAL_MS in the test stack) flips it back without being asked...
    await dns.deleteTxt(dkim.name);
    const timeout = domainCheckIntervalMs * 10;
    const lapsed = await eventually(
      async () => (await listDomains()).body.find((domain) => domain.id === created.id),
      (domain) => domain?.verified === false,
      timeout,
    );
    expect(lapsed).toMatchObject({ verified: false, status: "pending" });
    expect(lapsed && recordOf(lapsed, "dkim").status).toBe("pending");
    expect(lapsed && recordOf(lapsed, "spf").status).toBe("verified");

    // ...and forward again once the record is back.
    await dns.setTxt(dkim.name, [dkim.value]);
    const restored = await eventually(
      async () => (await listDomains()).body.find((domain) => domain.id === created.id),
      (domain) => domain?.verified === true,
      timeout,
    );
    expect(restored).toMatchObject({ verified: true, status: "verified" });
  });

  it("refuses invalid domain names with 422 VALIDATION_ERROR naming the field", async () => {
    for (const domain of [
      "not a domain",
      "https://example.com",
      "example.com/path",
      "localhost",
      "a..example.com",
      "-bad.example.com",
      `${"a".repeat(64)}.example.com`,
      `${Array.from({ length: 4 }, () => "a".repeat(63)).join(".")}.com`,
      "192.168.1.1",
    ]) {
      const answer = await addDomain(domain);
      expect(answer.status, domain).toBe(422);
      expect(answer.body).toMatchObject({
        success: false,
        error: {
          code: "VALIDATION_ERROR",
          statusCode: 422,
          requestId: expect.any(String),
          errors: [{ field: "domain", code: "invalid_domain" }],
        },
        timestamp: expect.any(String),
      });
    }
    for (const body of [{}, { domain: 42 }, { domain: "" }]) {
      const answer = await call<ErrorBody>("POST", "/domains", { key, body });
      expect(answer.status).toBe(422);
      expect(answer.body.error.code).toBe("VALIDATION_ERROR");
      expect(answer.body.error.errors?.[0]?.field).toBe("domain");
    }
  });

  it("refuses a domain the project already has with 409 DOMAIN_EXISTS; another project may add it", async () => {
    const name = uniqueDomain("duplicate");
    expect((await addDomain(name)).status).toBe(201);
    const again = await addDomain(name.toUpperCase());
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ success: false, error: { code: "DOMAIN_EXISTS", statusCode: 409 } });
    expect(again.body.error.message).toContain(name);
    expect((await addDomain(name, other.secretKey)).status).toBe(201);
  });

  it("another project's key reaches nothing: 404 everywhere", async () => {
    const mine = (await addDomain(uniqueDomain("tenancy"))).body;
    const foreign = other.secretKey;
    const list = await listDomains(project.id, foreign);
    expect(list.status).toBe(404);
    expect(list.body.error.code).toBe("PROJECT_NOT_FOUND");
    expect((await listDomains(other.id, foreign)).body.map((domain) => domain.id)).not.toContain(mine.id);
    const verifyAnswer = await verify(mine.id, foreign);
    expect(verifyAnswer.status).toBe(404);
    expect(verifyAnswer.body.error.code).toBe("DOMAIN_NOT_FOUND");
    const deleteAnswer = await call<ErrorBody>("DELETE", `/domains/${mine.id}`, { key: foreign });
    expect(deleteAnswer.status).toBe(404);
    expect((await listDomains()).body.map((domain) => domain.id)).toContain(mine.id);
  });

  it("answers 401 without a key or with a public key, and lets a member's session in", async () => {
    expect((await call<ErrorBody>("GET", `/domains/project/${project.id}`)).status).toBe(401);
    const publicKey = await listDomains(project.id, project.publicKey);
    expect(publicKey.status).toBe(401);
    expect(publicKey.body.error.code).toBe("INVALID_API_KEY");

    const viaSession = await call<Domain[]>("GET", `/domains/project/${project.id}`, { cookie: owner.cookie });
    expect(viaSession.status).toBe(200);
    const added = await call<Domain>("POST", "/domains", {
      cookie: owner.cookie,
      headers: { "x-project-id": project.id },
      body: { domain: uniqueDomain("session") },
    });
    expect(added.status).toBe(201);
    expect(added.body.projectId).toBe(project.id);
    expect((await call("GET", `/domains/project/${other.id}`, { cookie: owner.cookie })).status).toBe(404);
  });

  it("deletes a domain: 204, then it is gone", async () => {
    const domain = (await addDomain(uniqueDomain("delete"))).body;
    const deleted = await call("DELETE", `/domains/${domain.id}`, { key });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    expect((await listDomains()).body.map((listed) => listed.id)).not.toContain(domain.id);
    expect((await verify(domain.id)).status).toBe(404);
    expect((await call<ErrorBody>("DELETE", `/domains/${domain.id}`, { key })).status).toBe(404);
    expect((await call<ErrorBody>("DELETE", "/domains/not-a-uuid", { key })).body.error.code).toBe("DOMAIN_NOT_FOUND");
    // The name is free again.
    expect((await addDomain(domain.domain)).status).toBe(201);
  });

  it("stores the private key encrypted, and it pairs with the published public key", async () => {
    const domain = (await addDomain(uniqueDomain("sealed"))).body;
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    let row: { private_key_encrypted: string; public_key: string } | undefined;
    try {
      const { rows } = await client.query("SELECT * FROM delivery.domains WHERE id = $1", [domain.id]);
      row = rows[0];
    } finally {
      await client.end();
    }
    if (!row) throw new Error("domain row not found");
    const stored = JSON.stringify(row);
    expect(stored).not.toContain("PRIVATE KEY");
    expect(stored).not.toContain("MIIE"); // the start of a base64 PKCS#8 RSA key
    const privateKeyPem = decryptPrivateKey(Buffer.from(dkimEncryptionKey, "hex"), row.private_key_encrypted, domain.id);
    expect(privateKeyPem).toContain("BEGIN PRIVATE KEY");
    const p = recordOf(domain, "dkim").value.split("p=")[1] ?? "";
    const publicKey = createPublicKey({ key: Buffer.from(p, "base64"), format: "der", type: "spki" });
    const signature = createSign("sha256").update("DKIM").sign(privateKeyPem);
    expect(createVerify("sha256").update("DKIM").verify(publicKey, signature)).toBe(true);
  });

  it("forgets a deleted project's domains, keys and all", async () => {
    const doomed = await createProject(call, owner.cookie, "Doomed");
    expect((await addDomain(uniqueDomain("doomed"), doomed.secretKey)).status).toBe(201);
    const rowsOf = async () => {
      const client = new pg.Client({ connectionString: stack.databaseUrl });
      await client.connect();
      try {
        return (await client.query("SELECT id FROM delivery.domains WHERE project_id = $1", [doomed.id])).rowCount ?? 0;
      } finally {
        await client.end();
      }
    };
    expect(await rowsOf()).toBe(1);
    expect((await call("DELETE", `/users/@me/projects/${doomed.id}`, { cookie: owner.cookie })).status).toBe(204);
    expect(await eventually(rowsOf, (count) => count === 0, 20_000)).toBe(0);
  });
});
