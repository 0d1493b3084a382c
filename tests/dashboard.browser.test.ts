import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, openPage, screenshot } from "./support/browser.js";
import { uniqueEmail } from "./support/http.js";

const { stack, dns: dnsServer, smtp, chromiumPath } = inject("herald");
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);
const patient = { timeout: 60_000 };

/**
 * The dashboard end to end in Debian's Chromium, as its user would: through the pages only,
 * except for what happens outside Herald (the DNS record, the mailbox, the click in the email,
 * the application's /v1/track).
 */
describe("the dashboard in a browser", { timeout: 180_000 }, () => {
  let browser: Browser;
  let page: Page;
  const shot = (name: string) => screenshot(page, name);
  const go = (hash: string) => page.goto(`${stack.gatewayUrl}/app/#${hash}`);

  beforeAll(async () => {
    browser = await launchBrowser(chromiumPath);
    page = await openPage(browser, stack.gatewayUrl);
  });

  afterAll(async () => {
    await browser?.close();
  });

  const owner = { email: uniqueEmail("dash-owner"), password: "a-dashboard-password" };
  let domain = "";
  let publicKey = "";

  it("signs up, creates a project and verifies a sending domain", async () => {
    await page.goto(`${stack.gatewayUrl}/`);
    await expect.poll(() => page.url()).toContain("/app/");
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Dana");
    await page.getByLabel("Email", { exact: true }).fill(owner.email);
    await page.getByLabel("Password", { exact: true }).fill(owner.password);
    await shot("sign-up");
    await page.getByRole("button", { name: "Sign up" }).click();

    await page.getByLabel("Project name").fill("Browser project");
    await page.getByRole("button", { name: "Create the project" }).click();
    await page.getByRole("heading", { name: "Getting started" }).waitFor();
    publicKey = (await page.locator("code").first().textContent()) ?? "";
    expect(publicKey).toMatch(/^pk_/);
    await shot("overview");

    domain = `dash-${Date.now().toString(36)}.herald.test`;
    await page.getByRole("link", { name: "Domains" }).click();
    await page.getByLabel("Domain", { exact: true }).fill(domain);
    await page.getByRole("button", { name: "Add the domain" }).click();
    const dkimName = page.locator("td code", { hasText: "_domainkey" });
    await dkimName.waitFor();
    const name = (await dkimName.textContent()) ?? "";
    const value = (await page.locator("tr", { has: dkimName }).locator("td.wrap code").textContent()) ?? "";
    await dns.setTxt(name, [value]);
    await page.getByRole("button", { name: "Check now" }).click();
    await page.locator(".badge.ok", { hasText: "Verified" }).waitFor(patient);
    await shot("domains");
  });

  it("creates a template with a live preview, imports contacts, builds a segment, and sends a campaign whose stats move", async () => {
    await go("/templates/new");
    await page.getByLabel("Name", { exact: true }).fill("Launch");
    await page.getByLabel("Type", { exact: true }).selectOption("MARKETING");
    await page.getByLabel("From (an address of a verified domain)").fill(`news@${domain}`);
    await page.getByLabel("Subject", { exact: true }).fill("Hello {{ data.firstName }}");
    // A new template starts with blocks; this one is written as HTML (the block editor's own test is dashboard-editor.browser.test.ts).
    await page.getByLabel("HTML", { exact: true }).check();
    await page.getByLabel("Body (HTML with Liquid)").fill('<p>Hi {{ data.firstName }}</p><a href="https://example.com/launch">See it</a>');
    await page.getByRole("group", { name: "Sample data" }).getByLabel("firstName").fill("Ada");
    await page.locator(".preview", { hasText: "Hello Ada" }).waitFor();
    await shot("template-editor");
    // A Liquid error shows with its line.
    await page.getByLabel("Body (HTML with Liquid)").fill("<p>\n{% if %}</p>");
    await page.locator(".preview .error", { hasText: "line 2" }).waitFor();
    await page.getByLabel("Body (HTML with Liquid)").fill('<p>Hi {{ data.firstName }}</p><a href="https://example.com/launch">See it</a>');
    await page.getByRole("button", { name: "Save the template" }).click();
    await page.getByRole("heading", { name: "Template: Launch" }).waitFor();

    const batch = Date.now().toString(36);
    const pro = [uniqueEmail(`pro-${batch}`), uniqueEmail(`pro-${batch}`)];
    const csv = ["email,firstName,plan", `${pro[0]},Ada,pro`, `${pro[1]},Grace,pro`, `${uniqueEmail("free")},Alan,free`].join("\n");
    await page.getByRole("link", { name: "Contacts" }).click();
    await page.getByLabel(/CSV file/).setInputFiles({ name: "contacts.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
    // Its columns keep their names (tests/dashboard-comforts.browser.test.ts maps some).
    await page.getByRole("button", { name: "Import 3 rows" }).click();
    await page.getByRole("status").filter({ hasText: "completed: 3 imported" }).waitFor(patient);
    await page.getByRole("button", { name: "Show them" }).click();
    await page.getByRole("link", { name: pro[0] }).waitFor();
    await shot("contacts");

    await page.getByRole("link", { name: "Segments" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Pro plan");
    await page.getByLabel("Field", { exact: true }).fill("data.plan");
    await page.getByLabel("Operator", { exact: true }).selectOption("equals");
    await page.getByLabel("Value", { exact: true }).fill("pro");
    await page.locator(".count", { hasText: "2 subscribed contacts" }).waitFor();
    await shot("segment-builder");
    await page.getByRole("button", { name: "Create the segment" }).click();
    await page.getByRole("cell", { name: "Pro plan" }).waitFor();

    await go("/campaigns/new");
    await page.getByLabel("Start from a template").selectOption({ label: "Launch" });
    await page.getByLabel("Name", { exact: true }).fill("Launch campaign");
    await page.getByLabel("Audience", { exact: true }).selectOption("SEGMENT");
    await page.getByLabel("Segment", { exact: true }).selectOption({ label: "Pro plan" });
    await page.locator(".count", { hasText: "2 subscribed contacts" }).waitFor();
    await page.getByRole("button", { name: "Create the campaign" }).click();
    await page.getByRole("button", { name: "Send now" }).click();
    await expect.poll(() => page.getByTestId("campaign-status").textContent(), patient).toBe("SENT");

    const received = await sink.waitForMessages(1, { to: pro[0] as string, timeoutMs: 60_000 });
    const html = String((await simpleParser(received[0]?.raw ?? "")).html);
    expect(html).toContain("Hi Ada");
    const click = /href="([^"]*\/t\/c\/[^"]+)"/.exec(html)?.[1];
    expect(click).toBeDefined();
    expect((await fetch(click?.replaceAll("&amp;", "&") ?? "", { redirect: "manual" })).status).toBe(302);
    await expect.poll(() => page.getByTestId("stat-clicked").textContent(), patient).toMatch(/^1 /);
    await shot("campaign-stats");
  });

  it("builds a three-step workflow in the editor, and shows the execution that /v1/track starts complete", async () => {
    await page.getByRole("link", { name: "Workflows" }).click();
    await page.getByLabel("Name", { exact: true }).fill("Welcome flow");
    await page.getByLabel("Starts on the event").fill("browser_signup");
    await page.getByRole("button", { name: "Create the workflow" }).click();

    // Each step from its form (no JSON); the graph's own test, with dragging, is dashboard-workflows.browser.test.ts.
    const addStep = async (type: string, name: string, fill: () => Promise<void>) => {
      await page.getByRole("button", { name: "Add a step" }).click();
      await page.getByLabel("Step type").selectOption(type);
      await page.getByLabel("Step name").fill(name);
      await fill();
      await page.getByRole("button", { name: "Add the step" }).click();
      await page.getByRole("heading", { name: `${type}: ${name}` }).waitFor();
    };
    await addStep("SEND_EMAIL", "Welcome email", async () => {
      await page.getByLabel("Template", { exact: true }).selectOption({ label: "Launch" });
      await page.getByLabel("Subject (empty: the template's)").fill("Welcome {{ data.firstName }}");
      await page.getByLabel("From (empty: the template's)").fill(`hello@${domain}`);
    });
    await addStep("DELAY", "Wait a minute", async () => {
      await page.getByLabel("Wait for").fill("1");
      await page.getByLabel("Unit", { exact: true }).selectOption("minutes");
    });
    await addStep("UPDATE_CONTACT", "Mark welcomed", async () => {
      await page.getByLabel("Field 1 name").fill("welcomed");
      await page.getByLabel("Field 1 value").fill("true");
    });
    const connect = async (from: string, to: string) => {
      await page.getByRole("button", { name: from }).click();
      await page.getByLabel("Next step", { exact: true }).selectOption({ label: to });
      await page.getByRole("button", { name: "Save the next steps" }).click();
    };
    await connect("Welcome email (SEND_EMAIL)", "Wait a minute (DELAY)");
    await expect.poll(() => page.locator(".react-flow__edge").count()).toBe(1);
    await connect("Wait a minute (DELAY)", "Mark welcomed (UPDATE_CONTACT)");
    await expect.poll(() => page.locator(".react-flow__edge").count()).toBe(2);
    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByRole("button", { name: "Disable" }).waitFor();
    await shot("workflow-editor");

    const to = uniqueEmail("flow");
    // The application tracks the event; the engine may take a moment to hear of the enabled workflow.
    await expect
      .poll(
        async () => {
          const tracked = await fetch(`${stack.gatewayUrl}/v1/track`, {
            method: "POST",
            headers: { authorization: `Bearer ${publicKey}`, "content-type": "application/json" },
            body: JSON.stringify({ event: "browser_signup", email: to, data: { firstName: "Lin" } }),
          });
          expect(tracked.status).toBe(200);
          return (await sink.messages(to)).length;
        },
        { timeout: 60_000, interval: 1_000 },
      )
      .toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId("execution-status").first().textContent(), patient).toBe("COMPLETED");
    await page.getByRole("button", { name: "Show in the graph" }).first().click();
    await page.getByRole("list", { name: "Step history" }).waitFor();
    await page.locator('[data-state="current"]', { hasText: "Mark welcomed" }).waitFor();
    await shot("workflow-executions");
  });

  it("shows the activity feed, and logs out", async () => {
    await page.getByRole("link", { name: "Activity" }).click();
    await page.getByRole("cell", { name: "email.sent" }).first().waitFor(patient);
    await shot("activity");
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    const me = await page.evaluate(async () => (await fetch("/users/@me")).status);
    expect(me).toBe(401);
  });
});
