import { testDnsClient, waitUntil } from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

type Page = { data: CampaignJson[]; total: number };

/** A project reset or deleted through the REST API: its campaigns go with its other data (campaigns' project-wipe consumer). */
describe("campaigns of a reset or deleted project", () => {
  let owner: SignedInUser;
  let pool: pg.Pool;

  beforeAll(async () => {
    owner = await signUp(call, "campaign-wipe");
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 1 });
  });

  afterAll(async () => {
    await pool?.end();
  });

  async function projectWithCampaigns(name: string): Promise<{ project: CreatedProject; domain: string; ids: string[] }> {
    const project = await createProject(call, owner.cookie, name);
    const { domain } = await verifiedDomain(call, dns, project.secretKey, "campaign-wipe");
    const ids: string[] = [];
    for (const label of ["draft", "scheduled"]) {
      const created = await call<{ data: CampaignJson }>("POST", "/campaigns", {
        key: project.secretKey,
        body: { name: `${name} ${label}`, subject: "Hi", body: "<p>Hi</p>", from: `news@${domain}`, audienceType: "ALL" },
      });
      expect(created.status).toBe(201);
      ids.push(created.body.data.id);
    }
    const scheduledFor = new Date(Date.now() + 86_400_000).toISOString();
    expect((await call("POST", `/campaigns/${ids[1]}/send`, { key: project.secretKey, body: { scheduledFor } })).status).toBe(200);
    return { project, domain, ids };
  }

  const rowsOf = async (projectId: string) =>
    Number(
      (await pool.query<{ n: string }>("SELECT count(*) AS n FROM campaigns.campaigns WHERE project_id = $1::uuid", [projectId])).rows[0]
        ?.n,
    );

  it("a reset wipes the campaigns the project had, scheduled ones included; a campaign written after it stays", async () => {
    const { project, domain, ids } = await projectWithCampaigns("Reset");
    const kept = await projectWithCampaigns("Kept");
    expect((await call("POST", `/users/@me/projects/${project.id}/reset`, { cookie: owner.cookie })).status).toBe(200);
    const list = () => call<Page>("GET", "/campaigns", { key: project.secretKey });
    await waitUntil(async () => (await list()).body.total === 0, { timeoutMs: 60_000 });
    for (const id of ids) expect((await call("GET", `/campaigns/${id}`, { key: project.secretKey })).status).toBe(404);
    const upcoming = await call<{ data: Array<{ id: string }> }>("GET", "/activity/upcoming", { key: project.secretKey });
    expect(upcoming.body.data).toEqual([]);

    // The project goes on: its domain stayed verified, and a new campaign is its own.
    const after = await call<{ data: CampaignJson }>("POST", "/campaigns", {
      key: project.secretKey,
      body: { name: "After the reset", subject: "Hi", body: "<p>Hi</p>", from: `news@${domain}`, audienceType: "ALL" },
    });
    expect(after.status).toBe(201);
    expect((await list()).body.data.map((campaign) => campaign.id)).toEqual([after.body.data.id]);
    // Another project's campaigns are untouched.
    expect((await call<Page>("GET", "/campaigns", { key: kept.project.secretKey })).body.total).toBe(2);
  }, 120_000);

  it("a deletion wipes every campaign of the project", async () => {
    const { project } = await projectWithCampaigns("Deleted");
    const kept = await projectWithCampaigns("Also kept");
    expect(await rowsOf(project.id)).toBe(2);
    expect((await call("DELETE", `/users/@me/projects/${project.id}`, { cookie: owner.cookie })).status).toBe(204);
    await waitUntil(async () => (await rowsOf(project.id)) === 0, { timeoutMs: 60_000 });
    expect(await rowsOf(kept.project.id)).toBe(2);
  }, 120_000);
});
