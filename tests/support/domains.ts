import { randomUUID } from "node:crypto";
import type { testDnsClient } from "@herald/testing";
import { expect } from "vitest";
import type { RestClient } from "./http.js";

export type DomainJson = { id: string; verified: boolean; records: Array<{ purpose: string; name: string; value: string }> };

export const uniqueDomain = (label: string) => `${label}-${randomUUID().slice(0, 8)}.herald.test`;

/** Adds a domain to the project, publishes its DKIM record in the test DNS server and verifies it. */
export async function verifiedDomain(
  call: RestClient,
  dns: ReturnType<typeof testDnsClient>,
  key: string,
  label: string,
): Promise<{ domain: string; dkim: { name: string; value: string } }> {
  const domain = uniqueDomain(label);
  const created = await call<DomainJson>("POST", "/domains", { key, body: { domain } });
  expect(created.status).toBe(201);
  const dkim = created.body.records.find((record) => record.purpose === "dkim");
  if (!dkim) throw new Error("no DKIM record");
  await dns.setTxt(dkim.name, [dkim.value]);
  const verified = await call<DomainJson>("GET", `/domains/${created.body.id}/verify`, { key });
  expect(verified.body.verified).toBe(true);
  return { domain, dkim };
}
