import { describe, expect, inject, it } from "vitest";

const { stack } = inject("herald");

describe("the dashboard's security headers", () => {
  it("come with the dashboard's page and files: a CSP that forbids framing and foreign scripts, nosniff, no Referer", async () => {
    const page = await fetch(`${stack.gatewayUrl}/app/`);
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("x-frame-options")).toBe("SAMEORIGIN");

    const script = /src="(\/app\/assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${stack.gatewayUrl}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("x-content-type-options")).toBe("nosniff");
    expect(asset.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });

  it("come with the redirects into the dashboard", async () => {
    const root = await fetch(`${stack.gatewayUrl}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });
});
