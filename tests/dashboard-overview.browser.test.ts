import { testDnsClient, testSmtpSinkClient, waitUntil } from "@herald/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, openPage, screenshot, seriousViolations } from "./support/browser.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";

const { stack, chromiumPath, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

const counted = ["sent", "delivered", "opened", "clicked", "bounced", "complained"] as const;
type Totals = Record<(typeof counted)[number], number>;
type Timeseries = { buckets: Array<Record<string, number | string>> };

/** The UTC date `days - 1` days before today: with today's bucket, the period the overview shows. */
const firstDayOf = (days: number) => new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);

/**
 * The overview in Debian's Chromium: the mail of the last 7 and 30 days as GET /analytics/timeseries counts it, each rate
 * beside the reputation guard's levels, the chart, the top events, and a period that a shared link keeps.
 */
describe("the dashboard's overview in a browser", { timeout: 240_000 }, () => {
  let browser: Browser;
  let page: Page;
  let owner: SignedInUser;
  let project: CreatedProject;
  const shot = (name: string) => screenshot(page, name);

  /** The API's counts for the period, summed from its daily buckets as the overview sums them. */
  const totalsFromApi = async (days: number): Promise<Totals> => {
    const answer = await call<Timeseries>("GET", `/analytics/timeseries?from=${firstDayOf(days)}&interval=day`, {
      key: project.secretKey,
    });
    expect(answer.status).toBe(200);
    const totals = Object.fromEntries(counted.map((name) => [name, 0])) as Totals;
    for (const bucket of answer.body.buckets) for (const name of counted) totals[name] += Number(bucket[name] ?? 0);
    return totals;
  };

  /** The figures the page shows, as numbers. */
  const totalsOnPage = async (): Promise<Totals> => {
    const totals = {} as Totals;
    for (const name of counted) {
      const text = (await page.getByTestId(`figure-${name}`).first().textContent()) ?? "";
      totals[name] = Number(text.trim().split(/\s/)[0]);
    }
    return totals;
  };

  beforeAll(async () => {
    owner = await signUp(call, "overview-owner");
    project = await createProject(call, owner.cookie, "Overview project");
    const { domain } = await verifiedDomain(call, dns, project.secretKey, "overview");
    const recipients = [uniqueEmail("overview-a"), uniqueEmail("overview-b"), uniqueEmail("overview-c")];
    for (const to of recipients) {
      const sent = await call("POST", "/v1/send", {
        key: project.secretKey,
        body: { to, from: `news@${domain}`, subject: "Hello", body: '<p>Hi, <a href="https://example.com/x">read</a></p>' },
      });
      expect(sent.status).toBe(200);
    }
    for (const to of recipients) await sink.waitForMessages(1, { to, timeoutMs: 30_000 });
    const tracked = await call("POST", "/v1/track", { key: project.publicKey, body: { email: recipients[0], event: "plan-upgraded" } });
    expect(tracked.status).toBe(200);
    // The page is compared with the API once the counts stand still: every email handed to the relay (a delivery is
    // counted only when a receiver's report says so, which the test's sink sends none of).
    await waitUntil(async () => (await totalsFromApi(7)).sent === recipients.length, { timeoutMs: 60_000 });

    browser = await launchBrowser(chromiumPath);
    page = await openPage(browser, stack.gatewayUrl, owner.cookie);
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("shows the last 7 days' counts and rates as the API counts them, against the guard's levels", async () => {
    const securityReads: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (request.url().endsWith("/security")) securityReads.push(request.url());
    };
    page.on("request", onRequest);
    await page.goto(`${stack.gatewayUrl}/app/#/overview`);
    await page.getByRole("heading", { name: "Mail, last 7 days" }).waitFor();
    await page.getByTestId("overview-figures").waitFor();
    const api = await totalsFromApi(7);
    expect(api.sent).toBe(3);
    expect(await totalsOnPage()).toEqual(api);
    expect(await page.getByTestId("rate-sent").count()).toBe(0);
    expect(await page.getByTestId("rate-opened").textContent()).toBe(`(${((api.opened / api.sent) * 100).toFixed(1)} %)`);
    // The rates the reputation guard judges carry its levels (the deployment's defaults here).
    await page.getByText("Warning at 5 %, suspension at 10 %").waitFor();
    await page.getByText("Warning at 0.075 %, suspension at 0.15 %").waitFor();
    page.off("request", onRequest);
    // The banner above every page and the overview's levels read the project's security state once between them.
    expect(securityReads).toHaveLength(1);
    // The chart has its axes drawn by uPlot, and its figures as a table too.
    await page.locator(".chart .uplot canvas").first().waitFor();
    await page.getByRole("img", { name: /Mail over the last 7 days/ }).waitFor();
    await page.getByRole("cell", { name: "plan-upgraded" }).waitFor();
    await shot("overview");
  });

  it("keeps the period in the link, so that a shared link opens on the same figures", async () => {
    await page.getByRole("radio", { name: "Last 30 days" }).check();
    await page.getByRole("heading", { name: "Mail, last 30 days" }).waitFor();
    expect(page.url()).toContain("#/overview?days=30");
    expect(await totalsOnPage()).toEqual(await totalsFromApi(30));
    const shared = await page.context().newPage();
    await shared.goto(`${stack.gatewayUrl}/app/#/overview?days=30`);
    await shared.getByRole("heading", { name: "Mail, last 30 days" }).waitFor();
    expect(await shared.getByRole("radio", { name: "Last 30 days" }).isChecked()).toBe(true);
    await shared.close();
  });

  it("passes axe-core with no serious or critical violation", async () => {
    await page.goto(`${stack.gatewayUrl}/app/#/overview`);
    await page.getByTestId("overview-figures").waitFor();
    await page.locator(".chart .uplot canvas").first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
  });
});
