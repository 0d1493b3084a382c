import { entryOf, spawnService } from "@herald/testing";
import { afterAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../services/gateway/src/config.js";
import { createTestGateway } from "./support/gateway.js";

const herald = inject("herald");

describe("TRUST_PROXY", () => {
  it("refuses true, which would let a client behind an appending proxy choose its own address", () => {
    expect(() => loadConfig({ TRUST_PROXY: "true" })).toThrow(/TRUST_PROXY: .*X-Forwarded-For/);
  });

  it("stops the gateway process with TRUST_PROXY=true, naming the variable", async () => {
    const gateway = spawnService({ name: "gateway", entry: entryOf("gateway"), env: { TRUST_PROXY: "true" } });
    expect(await gateway.exited).toBe(1);
    expect(gateway.output()).toContain("TRUST_PROXY");
  });

  it("takes addresses, CIDRs and proxy-addr's named ranges, or a hop count, and refuses anything else", () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "false" }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "2" }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: "10.0.0.0/8, 192.168.1.7,fd00::/8,loopback" }).TRUST_PROXY).toEqual([
      "10.0.0.0/8",
      "192.168.1.7",
      "fd00::/8",
      "loopback",
    ]);
    expect(() => loadConfig({ TRUST_PROXY: "10.0.0.0/33" })).toThrow(/TRUST_PROXY: .*"10.0.0.0\/33"/);
    expect(() => loadConfig({ TRUST_PROXY: "proxy.internal" })).toThrow(/TRUST_PROXY: .*"proxy.internal"/);
    expect(() => loadConfig({ TRUST_PROXY: "yes" })).toThrow(/TRUST_PROXY/);
  });

  describe("the client address a gateway sees", () => {
    const gateways: Awaited<ReturnType<typeof createTestGateway>>[] = [];
    afterAll(async () => {
      await Promise.all(gateways.map((gateway) => gateway.close()));
    });

    /** A gateway of the test's own, with a route that answers the client address it sees. */
    async function gatewayTrusting(trust: string) {
      const gateway = await createTestGateway({
        serviceUrls: herald.stack.serviceUrls,
        redisUrl: herald.redisUrl,
        env: { TRUST_PROXY: trust },
      });
      gateways.push(gateway);
      gateway.app.get("/test/ip", async (request) => ({ ip: request.ip }));
      await gateway.app.ready();
      return async (remoteAddress: string, forwardedFor: string) =>
        (await gateway.app.inject({ method: "GET", url: "/test/ip", remoteAddress, headers: { "x-forwarded-for": forwardedFor } })).json()
          .ip as string;
    }

    it("with the proxy's address, believes X-Forwarded-For only from that proxy, and only its own entry", async () => {
      const ipOf = await gatewayTrusting("10.9.0.0/16");
      // The proxy appends the peer it saw; what the client wrote before it is not believed.
      expect(await ipOf("10.9.0.5", "198.51.100.1, 203.0.113.7")).toBe("203.0.113.7");
      // A client that reaches the gateway directly cannot claim an address.
      expect(await ipOf("192.0.2.44", "203.0.113.7")).toBe("192.0.2.44");
    });

    it("with a hop count, takes the address the nearest proxy appended", async () => {
      const ipOf = await gatewayTrusting("1");
      expect(await ipOf("10.9.0.5", "198.51.100.1, 203.0.113.7")).toBe("203.0.113.7");
    });
  });
});
