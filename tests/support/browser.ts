import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, chromium, type Page } from "playwright-core";

/** Screenshots of the dashboard's pages, kept as artefacts of the run (docs/dashboard.md shows them). */
const artefacts = fileURLToPath(new URL("../../.herald/artifacts/dashboard/", import.meta.url));

/** Debian's Chromium (the stack's `chromiumPath`), headless, as the browser tests drive it. */
export async function launchBrowser(chromiumPath: string): Promise<Browser> {
  mkdirSync(artefacts, { recursive: true });
  return chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-gpu"] });
}

/**
 * A page at a laptop's size in a context of its own (axe-core's AxeBuilder opens a page beside it to gather its
 * results), signed in when given a session cookie ("name=value"), waiting 30 s for an element by default.
 */
export async function openPage(browser: Browser, gatewayUrl: string, cookie?: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  if (cookie) {
    const [name, value] = cookie.split("=") as [string, string];
    await context.addCookies([{ name, value, url: gatewayUrl }]);
  }
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  return page;
}

/** A full-page screenshot under .herald/artifacts/dashboard/<name>.png. */
export const screenshot = (page: Page, name: string) => page.screenshot({ path: `${artefacts}${name}.png`, fullPage: true });

/**
 * axe-core's serious and critical violations on the page as it stands, each named with `where`. The email preview's
 * frame holds the email being written, not the dashboard, and runs no script (sandbox=""): axe cannot run in it, and
 * Chromium 156.0.8078.108 leaves axe's call into it unanswered instead of refusing it, so it is left out.
 */
export async function seriousViolations(page: Page, where = ""): Promise<string[]> {
  const results = await new AxeBuilder({ page }).exclude("iframe.preview-frame").analyze();
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${where ? `${where} ` : ""}${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
}
