import { createHmac } from "node:crypto";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, openPage, screenshot, seriousViolations } from "./support/browser.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";
import { startWebhookReceiver } from "./support/webhook-receiver.js";

const { stack, chromiumPath } = inject("herald");
const call = restClient(stack.gatewayUrl);
const patient = { timeout: 60_000 };

/**
 * The workflow editor in Debian's Chromium: a workflow with a CONDITION and a WEBHOOK built from the step forms only
 * (no JSON typed), its branches connected by dragging in the graph and by the keyboard's "Next step" selects, enabled;
 * two contacts tracked through /v1/track take the yes and the no branch, the yes branch's webhook reaches a real HTTP
 * server on the one private address the stack lets WEBHOOK steps reach, and each execution is shown in the graph.
 */
describe("the dashboard's workflow editor in a browser", { timeout: 300_000 }, () => {
  let browser: Browser;
  let page: Page;
  let owner: SignedInUser;
  let project: CreatedProject;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const shot = (name: string) => screenshot(page, name);
  const expectAccessible = async () => expect(await seriousViolations(page)).toEqual([]);
  const node = (name: string) => page.getByTestId("workflow-step").filter({ hasText: name });
  const edges = () => page.locator(".react-flow__edge");

  /** Drags with the mouse from a step's output handle to another step's input handle, as a user connects them. */
  const drag = async (from: Locator, to: Locator) => {
    // The graph fits itself to the view as steps are added: both handles must have stopped moving.
    await from.hover({ trial: true });
    await to.hover({ trial: true });
    const start = await from.boundingBox();
    const end = await to.boundingBox();
    if (!start || !end) throw new Error("a handle is not on screen");
    await page.mouse.move(start.x + start.width / 2, start.y + start.height / 2);
    await page.mouse.down();
    await page.mouse.move(end.x + end.width / 2, end.y + end.height / 2, { steps: 12 });
    await page.mouse.up();
  };
  const output = (step: string, branch: string) => node(step).locator(`.react-flow__handle.source[data-handleid="${branch}"]`);
  const input = (step: string) => node(step).locator(".react-flow__handle.target");

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // Signed in through the API: tests/dashboard.browser.test.ts walks the sign-up pages already.
    owner = await signUp(call, "flows-owner");
    project = await createProject(call, owner.cookie, "Workflows project");
    browser = await launchBrowser(chromiumPath);
    page = await openPage(browser, stack.gatewayUrl, owner.cookie);
  });

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
  });

  let secret = "";

  it("builds a workflow from the step forms, connects its branches by dragging and by keyboard, and enables it", async () => {
    await page.goto(`${stack.gatewayUrl}/app/#/workflows`);
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
    await expectAccessible();
    await page.getByLabel("Name", { exact: true }).fill("Plan router");
    await page.getByLabel("Starts on the event").fill("plan_chosen");
    await page.getByRole("button", { name: "Create the workflow" }).click();
    await page.getByRole("heading", { name: "Plan router" }).waitFor();
    expect(await page.getByLabel(/JSON/).count()).toBe(0);

    const addStep = async (type: string, name: string, fill: () => Promise<void>) => {
      await page.getByRole("button", { name: "Add a step" }).click();
      await page.getByLabel("Step type").selectOption(type);
      await page.getByLabel("Step name").fill(name);
      await fill();
      await page.getByRole("button", { name: "Add the step" }).click();
      // The new step opens in its own form, and appears in the graph.
      await page.getByRole("heading", { name: `${type}: ${name}` }).waitFor();
      await node(name).waitFor();
    };
    await addStep("CONDITION", "Is pro?", async () => {
      await page.getByLabel("Field", { exact: true }).fill("trigger.data.plan");
      await page.getByLabel("Operator", { exact: true }).selectOption("equals");
      await page.getByLabel("Value", { exact: true }).fill("pro");
    });
    await addStep("WEBHOOK", "Tell sales", async () => {
      await page.getByLabel("Method", { exact: true }).selectOption("POST");
      await page.getByLabel("URL", { exact: true }).fill(receiver.url("/sales"));
      await page.getByRole("button", { name: "Add a header" }).click();
      await page.getByLabel("Header 1 name").fill("X-Team");
      await page.getByLabel("Header 1 value").fill("sales");
      await page.getByRole("button", { name: "Add a body field" }).click();
      await page.getByLabel("Body field 1 name").fill("plan");
      await page.getByLabel("Body field 1 value").fill("{{ trigger.data.plan }}");
      secret = (await page.getByTestId("workflow-webhook-secret").textContent()) ?? "";
      expect(secret).toMatch(/^whsec_/);
    });
    await addStep("UPDATE_CONTACT", "Mark free", async () => {
      await page.getByLabel("Field 1 name").fill("tier");
      await page.getByLabel("Field 1 value").fill("free");
    });
    await addStep("EXIT", "Done", async () => {
      await page.getByLabel("Reason (shown in the execution)").fill("routed");
    });
    await node("Tell sales")
      .getByText(`POST ${receiver.url("/sales")}`)
      .waitFor();
    await node("Is pro?").getByText("trigger.data.plan equals pro").waitFor();

    // The condition's two outputs, dragged in the graph.
    await drag(output("Is pro?", "yes"), input("Tell sales"));
    await expect.poll(() => edges().count()).toBe(1);
    await drag(output("Is pro?", "no"), input("Mark free"));
    await expect.poll(() => edges().count()).toBe(2);
    // A connection dragged by mistake is selected with the keyboard and removed with Delete.
    await drag(output("Mark free", "next"), input("Done"));
    await expect.poll(() => edges().count()).toBe(3);
    const mistake = page.getByRole("group", { name: "From Mark free to Done" });
    await mistake.focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Delete");
    await expect.poll(() => edges().count()).toBe(2);

    // The webhook's next step, chosen with the keyboard in its form.
    const stepButton = page.getByRole("button", { name: "Tell sales (WEBHOOK)" });
    await stepButton.focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "WEBHOOK: Tell sales" }).waitFor();
    await page.getByLabel("Next step", { exact: true }).focus();
    await page.getByLabel("Next step", { exact: true }).selectOption({ label: "Done (EXIT)" });
    await page.getByRole("button", { name: "Save the next steps" }).press("Enter");
    await expect.poll(() => edges().count()).toBe(3);
    await page.getByRole("group", { name: "From Tell sales to Done" }).waitFor({ state: "attached" });
    await page.getByRole("group", { name: "From Is pro? (yes) to Tell sales" }).waitFor({ state: "attached" });
    await page.getByRole("group", { name: "From Is pro? (no) to Mark free" }).waitFor({ state: "attached" });

    // The condition's form shows its branches as the graph does.
    await page.getByRole("button", { name: "Is pro? (CONDITION)" }).click();
    expect(await page.getByLabel("Next step if yes").locator("option:checked").textContent()).toBe("Tell sales (WEBHOOK)");
    expect(await page.getByLabel("Next step if no").locator("option:checked").textContent()).toBe("Mark free (UPDATE_CONTACT)");
    expect(await page.getByLabel("Field", { exact: true }).inputValue()).toBe("trigger.data.plan");

    await page.getByRole("button", { name: "Enable" }).click();
    await page.getByRole("button", { name: "Disable" }).waitFor();
    await expectAccessible();
    await shot("workflow-graph");
  });

  it("sends one contact down the yes branch to the webhook and one down the no branch, and shows where each execution is", async () => {
    const track = async (email: string, plan: string) => {
      const answer = await call<{ data: { contact: string } }>("POST", "/v1/track", {
        key: project.publicKey,
        body: { email, event: "plan_chosen", data: { plan } },
      });
      expect(answer.status).toBe(200);
      return answer.body.data.contact;
    };
    const proEmail = uniqueEmail("flows-pro");
    let pro = "";
    // The engine may take a moment to hear of the enabled workflow; a contact enters it once, however often it is tracked.
    await expect
      .poll(
        async () => {
          pro = await track(proEmail, "pro");
          return receiver.received("/sales").length;
        },
        { timeout: 60_000, interval: 1_000 },
      )
      .toBe(1);
    const free = await track(uniqueEmail("flows-free"), "free");

    const [request] = receiver.received("/sales");
    expect(request?.headers["x-team"]).toBe("sales");
    expect(JSON.parse(request?.body ?? "")).toEqual({ plan: "pro" });
    // Signed with the secret the form showed: X-Herald-Signature is t=<timestamp>,v1=<HMAC-SHA256 of "<timestamp>.<body>">.
    const timestamp = String(request?.headers["x-herald-timestamp"]);
    const expected = createHmac("sha256", secret).update(`${timestamp}.${request?.body}`).digest("hex");
    expect(request?.headers["x-herald-signature"]).toBe(`t=${timestamp},v1=${expected}`);

    const row = (contactId: string) => page.getByTestId("execution").filter({ hasText: contactId });
    // The yes branch ends on the EXIT step, the no branch where its steps run out.
    await expect.poll(() => row(pro).getByTestId("execution-status").textContent(), patient).toBe("EXITED");
    await expect.poll(() => row(free).getByTestId("execution-status").textContent(), patient).toBe("COMPLETED");

    await row(pro).getByRole("button", { name: "Show in the graph" }).click();
    await expect.poll(() => page.locator('[data-state="current"]').textContent()).toContain("Done");
    await expect.poll(() => page.locator('[data-state="passed"] strong').allTextContents()).toEqual(["Is pro?", "Tell sales"]);
    await page
      .getByRole("list", { name: "Step history" })
      .getByText(/Tell sales: COMPLETED/)
      .waitFor();
    await shot("workflow-execution-yes");

    await row(free).getByRole("button", { name: "Show in the graph" }).click();
    await expect.poll(() => page.locator('[data-state="current"]').textContent()).toContain("Mark free");
    await expect.poll(() => page.locator('[data-state="passed"] strong').allTextContents()).toEqual(["Is pro?"]);
    expect(await page.getByRole("list", { name: "Step history" }).textContent()).not.toContain("Tell sales");
    await shot("workflow-execution-no");
    await expectAccessible();
  });
});
