import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, openPage, screenshot, seriousViolations } from "./support/browser.js";
import { uniqueEmail } from "./support/http.js";

const { stack, dns: dnsServer, smtp, chromiumPath } = inject("herald");
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);
const patient = { timeout: 60_000 };
/** A 2×2 PNG, for the image upload. */
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==",
  "base64",
);

/**
 * The email editor in Debian's Chromium: a campaign composed with blocks (a Liquid variable from
 * the picker, an uploaded image, a button, the unsubscribe footer) reaches the SMTP sink rendered
 * and tracked; a template is saved from blocks and edited again from its stored source.
 */
describe("the email editor in a browser", { timeout: 240_000 }, () => {
  let browser: Browser;
  let page: Page;
  const shot = (name: string) => screenshot(page, name);
  const go = (hash: string) => page.goto(`${stack.gatewayUrl}/app/#${hash}`);
  /** axe-core on the page as it stands (the email preview's frame left out): no serious or critical violation. */
  const expectAccessible = async () => expect(await seriousViolations(page)).toEqual([]);
  /** The session's REST API, for what the test checks behind the pages (the same cookie and project as the dashboard). */
  const rest = async (method: "GET" | "POST", path: string, data?: unknown) => {
    const projectId = await page.evaluate(() => localStorage.getItem("herald.project") ?? "");
    const answer = await page.request.fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: { "x-project-id": projectId, origin: stack.gatewayUrl, "content-type": "application/json" },
      ...(data === undefined ? {} : { data: JSON.stringify(data) }),
    });
    return { status: answer.status(), body: await answer.json() };
  };

  beforeAll(async () => {
    browser = await launchBrowser(chromiumPath);
    page = await openPage(browser, stack.gatewayUrl);
  });

  afterAll(async () => {
    await browser?.close();
  });

  let domain = "";
  const owner = uniqueEmail("editor-owner");
  const recipient = uniqueEmail("editor-reader");

  it("signs up, verifies a sending domain, and has a contact to write to", async () => {
    await go("/signup");
    await page.getByLabel("Name", { exact: true }).fill("Eddie");
    await page.getByLabel("Email", { exact: true }).fill(owner);
    await page.getByLabel("Password", { exact: true }).fill("an-editor-password");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByLabel("Project name").fill("Editor project");
    await page.getByRole("button", { name: "Create the project" }).click();
    await page.getByRole("link", { name: "Domains" }).waitFor();

    domain = `editor-${Date.now().toString(36)}.herald.test`;
    await page.getByRole("link", { name: "Domains" }).click();
    await page.getByLabel("Domain", { exact: true }).fill(domain);
    await page.getByRole("button", { name: "Add the domain" }).click();
    const dkimName = page.locator("td code", { hasText: "_domainkey" });
    await dkimName.waitFor();
    const value = (await page.locator("tr", { has: dkimName }).locator("td.wrap code").textContent()) ?? "";
    await dns.setTxt((await dkimName.textContent()) ?? "", [value]);
    await page.getByRole("button", { name: "Check now" }).click();
    await page.locator(".badge.ok", { hasText: "Verified" }).waitFor(patient);

    // The contact comes from the application's side: what the editor is tested on is the email.
    const created = await rest("POST", "/contacts", { email: recipient, data: { firstName: "Grace" } });
    expect(created.status).toBe(201);
  });

  it("composes a campaign with blocks, previews it at both widths, edits the draft again, tests it in one click, and sends it: the email is rendered, tracked and unsubscribable", async () => {
    await go("/campaigns/new");
    await page.getByLabel("Name", { exact: true }).fill("Blocks campaign");
    await page.getByLabel("From (an address of a verified domain)").fill(`news@${domain}`);
    await page.getByLabel("Subject", { exact: true }).fill("News for {{ firstName }}");

    // Block 1, the text: words, then a variable from the picker where the cursor is.
    const firstText = page.getByRole("group", { name: "1. Text" }).getByLabel("Text", { exact: true });
    await firstText.fill("Hello ");
    await firstText.press("End");
    await page.getByLabel("Contact field").selectOption("data.firstName");
    await page.getByLabel("Fallback when the contact has none").fill("friend");
    await page.getByRole("button", { name: "Insert the variable" }).click();
    await expect.poll(() => firstText.inputValue()).toBe('Hello {{ firstName ?? "friend" }}');

    // An image, uploaded through POST /uploads/image, and a button; both go before the footer.
    await page.getByRole("button", { name: "+ Image" }).click();
    const image = page.getByRole("group", { name: "2. Image" });
    await image.getByLabel(/Upload an image/).setInputFiles({ name: "logo.png", mimeType: "image/png", buffer: png });
    await expect.poll(() => image.getByLabel("Image URL").inputValue(), patient).toContain("/uploads/");
    const imageUrl = await image.getByLabel("Image URL").inputValue();
    await image.getByLabel("Alternative text").fill("Our logo");
    await page.getByRole("button", { name: "+ Button" }).click();
    const button = page.getByRole("group", { name: "3. Button" });
    await button.getByLabel("Button label").fill("Read the news");
    await button.getByLabel("Button link").fill("https://example.com/news");
    // Moved with the keyboard: the button above the image, and back.
    await button.getByRole("button", { name: "Move up block 3" }).press("Enter");
    await page.getByRole("group", { name: "2. Button" }).waitFor();
    await page.getByRole("group", { name: "3. Image" }).getByRole("button", { name: "Move up block 3" }).press("Enter");
    await page.getByRole("group", { name: "4. Footer with unsubscribe link" }).waitFor();

    // The server's preview, with the sample data's fields, at a desktop's and a phone's width.
    await page.getByRole("group", { name: "Sample data" }).getByLabel("firstName").fill("Ada");
    const frame = page.frameLocator("iframe[title^='Rendered body']");
    await frame.getByText("Hello Ada").waitFor();
    await expect.poll(() => page.getByTestId("preview-subject").textContent()).toBe("News for Ada");
    await page.getByLabel("Mobile (375 px)").check();
    await page.locator("iframe[title='Rendered body at 375 px']").waitFor();
    await shot("editor-campaign-mobile");
    await page.getByLabel("Desktop (640 px)").check();
    await expectAccessible();
    await shot("editor-campaign");

    await page.getByRole("button", { name: "Create the campaign" }).click();

    // The draft is written again from its stored blocks: the button's label changes, the rest stays.
    await page.getByRole("button", { name: "Edit", exact: true }).click();
    await page.getByRole("heading", { name: "Edit: Blocks campaign" }).waitFor();
    const id = page.url().split("/").at(-2) ?? "";
    const label = page.getByRole("group", { name: "3. Button" }).getByLabel("Button label");
    await expect.poll(() => label.inputValue()).toBe("Read the news");
    await label.fill("Read all the news");
    await expectAccessible();
    await page.getByRole("button", { name: "Save the campaign" }).click();
    await page.getByRole("button", { name: "Send now" }).waitFor();
    const saved = (await rest("GET", `/campaigns/${id}`)).body;
    expect(saved).toMatchObject({ name: "Blocks campaign", subject: "News for {{ firstName }}", audienceType: "ALL", type: "MARKETING" });
    expect(saved.editor.blocks.map((block: { type: string }) => block.type)).toEqual(["text", "image", "button", "footer"]);
    expect(saved.body).toContain("Read all the news");

    // A test to the signed-in user in one click: the campaign as saved, its subject marked.
    await page.getByRole("button", { name: `Send a test to ${owner}` }).click();
    await page.getByText(`Test sent to ${owner}`).waitFor();
    await expect
      .poll(async () => {
        const mails = await Promise.all((await sink.messages(owner)).map((message) => simpleParser(message.raw)));
        return mails.find((mail) => mail.subject?.startsWith("[Test] "))?.subject;
      }, patient)
      .toMatch(/^\[Test\] News for/);

    await page.getByRole("button", { name: "Send now" }).click();
    await expect.poll(() => page.getByTestId("campaign-status").textContent(), patient).toBe("SENT");

    const received = await sink.waitForMessages(1, { to: recipient, timeoutMs: 60_000 });
    const html = String((await simpleParser(received[0]?.raw ?? "")).html);
    expect(html).toContain("Hello Grace");
    expect(html).not.toContain("{{");
    expect(html).toContain(`src="${imageUrl}"`);
    expect(html).toContain("Read all the news");
    const click = /href="([^"]*\/t\/c\/[^"]+)"[^>]*>\s*Read all the news/.exec(html)?.[1];
    expect(click).toBeDefined();
    const redirect = await fetch(click?.replaceAll("&amp;", "&") ?? "", { redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toContain("https://example.com/news");
    const unsubscribe = /href="([^"]+)"[^>]*>Unsubscribe</.exec(html)?.[1] ?? "";
    expect(unsubscribe).toMatch(/\/unsubscribe\/|\/t\/c\//);
    expect(html).toContain("You receive this email because you signed up.");

    // Once sent, it is not written again.
    await go(`/campaigns/${id}/edit`);
    await page.getByText("A sent campaign can no longer be changed.").waitFor();
  });

  it("saves a template from blocks and edits it again from its stored source", async () => {
    await go("/templates/new");
    await page.getByLabel("Name", { exact: true }).fill("Blocks template");
    await page.getByLabel("From (an address of a verified domain)").fill(`hello@${domain}`);
    await page.getByLabel("Subject", { exact: true }).fill("Welcome");
    await page.getByRole("group", { name: "1. Text" }).getByLabel("Text", { exact: true }).fill("Welcome aboard");
    await page.getByRole("button", { name: "+ Columns" }).click();
    const columns = page.getByRole("group", { name: "2. Columns" });
    await columns.getByRole("group", { name: "Column 1" }).getByLabel("Text", { exact: true }).fill("Left side");
    await columns.getByRole("group", { name: "Column 2" }).getByLabel("Text", { exact: true }).fill("Right side");
    await page.getByRole("button", { name: "+ Button" }).click();
    await page.getByRole("group", { name: "3. Button" }).getByLabel("Button label").fill("Start");
    await page.getByRole("button", { name: "Save the template" }).click();
    await page.getByRole("heading", { name: "Template: Blocks template" }).waitFor();
    const id = page.url().split("/").at(-1) ?? "";

    // A fresh load reads the blocks back from the template's editor field.
    await page.reload();
    const button = page.getByRole("group", { name: "3. Button" });
    await expect.poll(() => button.getByLabel("Button label").inputValue()).toBe("Start");
    await expect
      .poll(() => page.getByRole("group", { name: "Column 2" }).getByLabel("Text", { exact: true }).inputValue())
      .toBe("Right side");
    await button.getByLabel("Button label").fill("Start now");
    // The server's preview shows every block, the changed one included.
    const preview = page.frameLocator("iframe[title^='Rendered body']");
    await preview.getByText("Start now").waitFor();
    await preview.getByText("Welcome aboard").waitFor();
    await expectAccessible();
    await shot("editor-template");
    await page.getByRole("button", { name: "Save the template" }).click();
    await expect.poll(async () => (await rest("GET", `/templates/${id}`)).body.body as string, patient).toContain("Start now");
    const saved = (await rest("GET", `/templates/${id}`)).body;
    expect(saved.editor.format).toBe("herald-blocks");
    expect(saved.editor.blocks.map((block: { type: string }) => block.type)).toEqual(["text", "columns", "button", "footer"]);
    expect(saved.body).toContain("Right side");
    expect(saved.body).toContain("Welcome aboard");

    // The raw HTML editor stays: switching keeps the HTML to edit by hand, and saving drops the blocks.
    await page.getByLabel("HTML", { exact: true }).check();
    await page.getByLabel("Body (HTML with Liquid)").fill("<p>By hand, {{ firstName }}</p>");
    await page.getByRole("button", { name: "Save the template" }).click();
    await expect.poll(async () => (await rest("GET", `/templates/${id}`)).body.editor, patient).toBeNull();
  });
});
