// The dashboard's first screen in Debian's Chromium: a cold browser context per run, from the
// navigation to the first screen drawn with its data, and the size of what it loads.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { ensureChromium } from "@herald/devinfra";
import { chromium } from "playwright-core";

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** The gzipped size of the bundle's entry chunk and of every asset together, in KB. */
function bundleSizes(): { entryKb: number; allKb: number } {
  const dist = dirname(createRequire(import.meta.url).resolve("@herald/dashboard/dist/index.html"));
  const assets = join(dist, "assets");
  const gz = (path: string) => gzipSync(readFileSync(path)).length / 1024;
  const files = readdirSync(assets);
  const entry = files.find((file) => /^index-.*\.js$/.test(file));
  return {
    entryKb: entry ? gz(join(assets, entry)) : 0,
    allKb: files.reduce((sum, file) => sum + gz(join(assets, file)), gz(join(dist, "index.html"))),
  };
}

export async function dashboardFirstScreen(gatewayUrl: string, runs = 10): Promise<string[]> {
  const browser = await chromium.launch({ executablePath: ensureChromium(console.log), args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const signUp = await fetch(`${gatewayUrl}/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: `dash-${Date.now()}@bench.test`, password: "benchmark-password" }),
    });
    const session = (signUp.headers.getSetCookie()[0] ?? "").split(";")[0]?.split("=") ?? [];
    await fetch(`${gatewayUrl}/users/@me/projects`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie: session.join("=") },
      body: JSON.stringify({ name: "Dashboard bench" }),
    });
    const measure = async (signedIn: boolean): Promise<number[]> => {
      const times: number[] = [];
      for (let run = 0; run < runs; run++) {
        const context = await browser.newContext();
        if (signedIn) await context.addCookies([{ name: session[0] ?? "", value: session[1] ?? "", url: gatewayUrl }]);
        const page = await context.newPage();
        const started = performance.now();
        await page.goto(`${gatewayUrl}/app/#/overview`);
        // Signed in, the first screen is the overview's figures of the project's mail, drawn from the API's answer.
        await (signedIn ? page.getByTestId("overview-figures") : page.getByRole("heading", { name: "Sign in" })).waitFor();
        times.push(performance.now() - started);
        await context.close();
      }
      return times.sort((a, b) => a - b);
    };
    const signedOut = await measure(false);
    const signedIn = await measure(true);
    const { entryKb, allKb } = bundleSizes();
    const row = (what: string, times: number[]) =>
      `| ${what} | ${runs} cold browser contexts | p50 ${Math.round(percentile(times, 50))} ms, worst ${Math.round(times.at(-1) ?? 0)} ms | entry chunk ${entryKb.toFixed(1)} KB gzipped, every asset ${allKb.toFixed(1)} KB |`;
    return [
      row("dashboard: the sign-in screen, from navigation to drawn", signedOut),
      row("dashboard: a signed-in user's overview with its data", signedIn),
    ];
  } finally {
    await browser.close();
  }
}
