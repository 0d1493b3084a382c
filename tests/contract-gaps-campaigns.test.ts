import { testDnsClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

describe("issue 30, contract gaps: campaign DELETE refusals", () => {
  let project: CreatedProject;
  let key: string;
  let domain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "gaps-campaigns")).cookie, "Gaps campaigns");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "gaps-campaigns")).domain;
  });

  it("a refused DELETE of a SCHEDULED campaign names the campaign, its status and when it sends, and how to cancel it", async () => {
    const created = await call<{ data: { id: string } }>("POST", "/campaigns", {
      key,
      body: { name: "Busy", subject: "Hello", body: "<p>Hello</p>", from: `news@${domain}`, audienceType: "ALL" },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const due = new Date(Date.now() + 86_400_000);
    const scheduled = await call<{ data: { status: string; scheduledFor: string } }>("POST", `/campaigns/${id}/send`, {
      key,
      body: { scheduledFor: due.toISOString() },
    });
    expect(scheduled.body.data.status).toBe("SCHEDULED");

    const refused = await call<ErrorBody & { error: { suggestion?: string } }>("DELETE", `/campaigns/${id}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("CAMPAIGN_STATE_CONFLICT");
    expect(refused.body.error.message).toContain(id);
    expect(refused.body.error.message).toContain(scheduled.body.data.scheduledFor);
    expect(refused.body.error.details).toEqual({ status: "SCHEDULED", campaignId: id, scheduledFor: scheduled.body.data.scheduledFor });
    expect(refused.body.error.suggestion).toContain(`POST /campaigns/${id}/cancel`);

    // Once cancelled, as the refusal says, it deletes.
    expect((await call("POST", `/campaigns/${id}/cancel`, { key })).status).toBe(200);
    expect((await call("DELETE", `/campaigns/${id}`, { key })).status).toBe(204);
  });
});
