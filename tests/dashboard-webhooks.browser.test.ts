import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, openPage, screenshot } from "./support/browser.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, verifyAddress } from "./support/http.js";
import { webhookReceiverAddress } from "./support/webhook-receiver.js";

const { stack, chromiumPath } = inject("herald");
const call = restClient(stack.gatewayUrl);
const patient = { timeout: 60_000 };

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** The application's endpoint: records every request, and answers with `status` (200 unless a test says otherwise). */
function startReceiver() {
  const received: Received[] = [];
  const state = { status: 200 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(state.status, { "content-type": "text/plain" }).end(state.status < 300 ? "thanks" : "not now");
    });
  });
  return { server, received, state };
}

/** Whether one of the request's webhook-signature entries is the secret's, as the Standard Webhooks specification defines it. */
function signedWith(secret: string, request: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const signed = `${request.headers["webhook-id"]}.${request.headers["webhook-timestamp"]}.${request.body}`;
  const expected = `v1,${createHmac("sha256", key).update(signed).digest("base64")}`;
  return String(request.headers["webhook-signature"] ?? "")
    .split(" ")
    .includes(expected);
}

/**
 * The Webhooks page end to end in Debian's Chromium: an admin adds an endpoint, keeps the secret shown once, sends a
 * test event that the application verifies, reads the message log with its attempts, retries a failed message,
 * recovers, rotates the secret, disables and deletes the endpoint. The application's endpoint is a real HTTP server
 * on the one private address the stack lets webhooks reach.
 */
describe("the dashboard's Webhooks page in a browser", { timeout: 240_000 }, () => {
  let browser: Browser;
  let page: Page;
  const receiver = startReceiver();
  let endpointUrl = "";
  let owner: SignedInUser;
  let project: CreatedProject;
  const shot = (name: string) => screenshot(page, name);
  const lastReceived = () => receiver.received.at(-1);

  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.server.listen(0, webhookReceiverAddress, resolve));
    endpointUrl = `http://${webhookReceiverAddress}:${(receiver.server.address() as AddressInfo).port}/herald`;
    // Signed in through the API: tests/dashboard.browser.test.ts walks the sign-up pages already.
    owner = await signUp(call, "hooks-owner");
    // Only a verified owner may add members (the member test below).
    await verifyAddress(call, owner);
    project = await createProject(call, owner.cookie, "Webhooks project");
    browser = await launchBrowser(chromiumPath);
    page = await openPage(browser, stack.gatewayUrl, owner.cookie);
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => receiver.server.close(resolve));
  });

  let secret = "";

  it("adds an endpoint for two event types and shows its signing secret once", async () => {
    await page.goto(`${stack.gatewayUrl}/app/#/overview`);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("heading", { name: "Webhooks" }).waitFor();
    await page.getByText("No endpoint yet.").waitFor();
    await page.getByLabel("URL", { exact: true }).fill(endpointUrl);
    await page.getByLabel("Description", { exact: true }).fill("Order service");
    await page.getByLabel("email.delivered", { exact: true }).check();
    await page.getByLabel("email.bounced", { exact: true }).check();
    await page.getByText("2 chosen.").waitFor();
    await shot("webhooks-new");
    await page.getByRole("button", { name: "Add the endpoint" }).click();
    secret = (await page.getByTestId("webhook-secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    const row = page.getByRole("row", { name: new RegExp(endpointUrl) });
    await row.waitFor();
    expect(await row.textContent()).toContain("email.delivered, email.bounced");
    expect(await row.textContent()).toContain("Enabled");
    await shot("webhooks-list");

    // Shown once: the endpoint's own page has only its first characters.
    await page.getByRole("link", { name: endpointUrl }).first().click();
    await page.getByRole("heading", { name: endpointUrl }).waitFor();
    await expect.poll(() => page.getByTestId("webhook-secret").count()).toBe(0);
    expect(await page.locator("dd code").first().textContent()).toBe(`${secret.slice(0, 10)}…`);
  });

  it("sends a test event of a chosen type that the application verifies, and logs its attempt", async () => {
    await page.getByLabel("Event type", { exact: true }).selectOption("email.opened");
    await page.getByText("Example body of email.opened").waitFor();
    await page.getByRole("button", { name: "Send the test event" }).click();
    await expect.poll(() => receiver.received.length, patient).toBe(1);
    const request = lastReceived() as Received;
    expect(signedWith(secret, request)).toBe(true);
    expect(JSON.parse(request.body)).toMatchObject({ type: "email.opened", data: { projectId: expect.any(String) } });

    const message = page.getByTestId("webhook-message").filter({ hasText: String(request.headers["webhook-id"]) });
    await message.locator(".badge", { hasText: "delivered" }).waitFor(patient);
    await message.getByRole("button", { name: "Attempts" }).click();
    const attempts = message.getByRole("table", { name: /^Attempts of/ });
    await attempts.getByRole("cell", { name: "200", exact: true }).waitFor();
    await attempts.getByRole("cell", { name: "thanks" }).waitFor();
    await shot("webhooks-message-log");
  });

  it("shows a failing message's attempts with their status code, and delivers it again on Retry", async () => {
    receiver.state.status = 500;
    await page.getByLabel("Event type", { exact: true }).selectOption("email.bounced");
    await page.getByRole("button", { name: "Send the test event" }).click();
    await expect.poll(() => receiver.received.length, patient).toBeGreaterThan(1);
    const id = String(lastReceived()?.headers["webhook-id"]);
    const message = page.getByTestId("webhook-message").filter({ hasText: id });
    await message.getByRole("button", { name: "Attempts" }).click();
    await message
      .getByRole("table", { name: /^Attempts of/ })
      .getByRole("cell", { name: "500", exact: true })
      .first()
      .waitFor(patient);
    await shot("webhooks-failing-message");

    receiver.state.status = 200;
    await message.getByRole("button", { name: "Retry" }).click();
    await message.locator(".badge", { hasText: "delivered" }).waitFor(patient);
    // Every attempt of one message carries the same webhook-id.
    const attemptsOfMessage = receiver.received.filter((request) => request.headers["webhook-id"] === id);
    expect(attemptsOfMessage.length).toBeGreaterThan(1);
    expect(attemptsOfMessage.every((request) => signedWith(secret, request))).toBe(true);
  });

  it("filters the log by status, and recovers the failed messages of a period", async () => {
    await page.getByLabel("Status", { exact: true }).selectOption("delivered");
    await expect.poll(() => page.getByTestId("webhook-message").count(), patient).toBe(2);
    await page.getByLabel("Status", { exact: true }).selectOption("failed");
    await page.getByText("No message yet.").waitFor();
    await page.getByLabel("Status", { exact: true }).selectOption("all");
    await page.getByRole("button", { name: "Send the failed messages again" }).click();
    await page.getByRole("status").filter({ hasText: "0 messages queued again." }).waitFor();
  });

  it("rotates the secret: the new one is shown once, and both sign until the old one expires", async () => {
    await page.getByRole("button", { name: "Rotate the signing secret" }).click();
    await page.getByLabel("Type “rotate” to confirm").fill("rotate");
    await page.getByRole("button", { name: "Rotate the signing secret" }).last().click();
    const rotated = (await page.getByTestId("webhook-secret").textContent()) ?? "";
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByText(/The previous secret also signs every request until/).waitFor();
    await shot("webhooks-rotated");

    const before = receiver.received.length;
    await page.getByLabel("Event type", { exact: true }).selectOption("email.delivered");
    await page.getByRole("button", { name: "Send the test event" }).click();
    await expect.poll(() => receiver.received.length, patient).toBeGreaterThan(before);
    const request = lastReceived() as Received;
    expect(signedWith(rotated, request)).toBe(true);
    expect(signedWith(secret, request)).toBe(true);
  });

  it("shows a member the endpoints and their messages, and none of the controls the API refuses members", async () => {
    const member = await signUp(call, "hooks-member");
    await verifyAddress(call, member);
    const added = await call("POST", `/projects/${project.id}/members`, {
      cookie: owner.cookie,
      body: { email: member.email, role: "MEMBER" },
    });
    expect(added.status).toBe(201);
    const memberPage = await openPage(browser, stack.gatewayUrl, member.cookie);
    try {
      await memberPage.goto(`${stack.gatewayUrl}/app/#/webhooks`);
      await memberPage.getByRole("link", { name: endpointUrl }).waitFor();
      await memberPage.getByText("Only the project's owner and admins change webhooks").waitFor();
      expect(await memberPage.getByRole("button", { name: "Add the endpoint" }).count()).toBe(0);
      await memberPage.getByRole("link", { name: endpointUrl }).click();
      await memberPage.getByTestId("webhook-message").first().waitFor();
      for (const control of ["Disable", "Rotate the signing secret", "Send the test event", "Retry", "Delete the endpoint"]) {
        expect(await memberPage.getByRole("button", { name: control }).count(), control).toBe(0);
      }
      expect(await memberPage.getByTestId("webhook-secret").count()).toBe(0);
    } finally {
      await memberPage.context().close();
    }
  });

  it("edits the event types, disables and enables the endpoint, and deletes it", async () => {
    await page.getByLabel("email.bounced", { exact: true }).uncheck();
    await page.getByLabel("email.delivered", { exact: true }).uncheck();
    await page.getByText("None ticked: every event type is sent.").waitFor();
    await page.getByRole("button", { name: "Save the endpoint" }).click();
    await page.locator("dd", { hasText: "All events" }).waitFor();

    await page.getByRole("button", { name: "Disable", exact: true }).click();
    await page.locator(".badge", { hasText: "Disabled" }).first().waitFor();
    await page.getByRole("button", { name: "Enable", exact: true }).click();
    await page.locator(".badge", { hasText: "Enabled" }).first().waitFor();

    await page.getByRole("button", { name: "Delete the endpoint" }).click();
    await page.getByLabel("Type “delete” to confirm").fill("delete");
    await page.getByRole("button", { name: "Delete the endpoint" }).last().click();
    await page.getByText("No endpoint yet.").waitFor();
  });
});
