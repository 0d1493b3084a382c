import { entryOf, spawnService } from "@herald/testing";
import { describe, expect, it } from "vitest";

async function startupFailure(name: "contacts" | "delivery" | "identity" | "gateway", env: NodeJS.ProcessEnv) {
  const process = spawnService({ name, entry: entryOf(name), env });
  const code = await process.exited;
  return { code, output: process.output() };
}

describe("configuration is validated at start", () => {
  it("stops a service with a malformed DATABASE_URL, naming the variable", async () => {
    const { code, output } = await startupFailure("contacts", { DATABASE_URL: "mysql://nope" });
    expect(code).toBe(1);
    expect(output).toContain("DATABASE_URL");
    expect(output).toContain("postgresql://");
  });

  it("stops a service whose own URL has no usable port, naming the variable", async () => {
    const { code, output } = await startupFailure("contacts", { CONTACTS_URL: "http://127.0.0.1:99999" });
    expect(code).toBe(1);
    expect(output).toContain("CONTACTS_URL");
  });

  it("stops a service with a MIGRATE_ON_START that is not a boolean, naming the variable", async () => {
    const { code, output } = await startupFailure("contacts", { MIGRATE_ON_START: "sometimes" });
    expect(code).toBe(1);
    expect(output).toContain("MIGRATE_ON_START");
  });

  it("stops the gateway with a port that is not a number, naming the variable", async () => {
    const { code, output } = await startupFailure("gateway", { GATEWAY_PORT: "eighty" });
    expect(code).toBe(1);
    expect(output).toContain("GATEWAY_PORT");
  });

  it("stops the gateway with a port out of range, naming the variable", async () => {
    const { code, output } = await startupFailure("gateway", { GATEWAY_PORT: "70000" });
    expect(code).toBe(1);
    expect(output).toMatch(/GATEWAY_PORT: .*(65535|less than)/i);
  });

  it("stops the gateway with an OPERATOR_TOKEN shorter than 32 characters, and identity with a warning above its suspension", async () => {
    const gateway = await startupFailure("gateway", { OPERATOR_TOKEN: "short" });
    expect(gateway.code).toBe(1);
    expect(gateway.output).toMatch(/OPERATOR_TOKEN: must be at least 32 characters/);
    const identity = await startupFailure("identity", { REPUTATION_WARN_BOUNCE_PERCENT: "20" });
    expect(identity.code).toBe(1);
    expect(identity.output).toMatch(/REPUTATION_WARN_BOUNCE_PERCENT: must not exceed REPUTATION_SUSPEND_BOUNCE_PERCENT/);
  });
});

// The test run sets every secret (global-setup); these take them away. NODE_ENV undefined: not set at all.
describe("secrets are required unless NODE_ENV is development or test", () => {
  const secretsUnset = { JWT_SECRET: "", LINK_SIGNING_SECRET: "", DKIM_ENCRYPTION_KEY: "", INTERNAL_RPC_TOKEN: "" };

  it("stops delivery without LINK_SIGNING_SECRET and DKIM_ENCRYPTION_KEY when NODE_ENV is unset, naming both", async () => {
    const { code, output } = await startupFailure("delivery", { ...secretsUnset, NODE_ENV: undefined });
    expect(code).toBe(1);
    expect(output).toContain("LINK_SIGNING_SECRET");
    expect(output).toContain("DKIM_ENCRYPTION_KEY");
  });

  it("stops delivery in production without LINK_SIGNING_SECRET alone, naming it", async () => {
    const { code, output } = await startupFailure("delivery", { NODE_ENV: "production", LINK_SIGNING_SECRET: "" });
    expect(code).toBe(1);
    expect(output).toContain("LINK_SIGNING_SECRET: is required");
    expect(output).not.toContain("DKIM_ENCRYPTION_KEY");
  });

  it("stops identity without JWT_SECRET when NODE_ENV is unset, naming it", async () => {
    const { code, output } = await startupFailure("identity", { ...secretsUnset, NODE_ENV: undefined });
    expect(code).toBe(1);
    expect(output).toContain("JWT_SECRET");
  });

  it("refuses a NODE_ENV it does not know rather than treating it as development", async () => {
    const { code, output } = await startupFailure("identity", { ...secretsUnset, NODE_ENV: "staging" });
    expect(code).toBe(1);
    expect(output).toContain("NODE_ENV");
  });

  it("stops the gateway without INTERNAL_RPC_TOKEN when NODE_ENV is unset, naming it", async () => {
    const { code, output } = await startupFailure("gateway", { ...secretsUnset, NODE_ENV: undefined });
    expect(code).toBe(1);
    expect(output).toContain("INTERNAL_RPC_TOKEN: is required");
  });
});
