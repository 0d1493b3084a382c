import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, envBoolean, envPort, parseConfig, portOfUrl, serviceEnvironment } from "./config.js";

const schema = z.object(serviceEnvironment);

describe("parseConfig", () => {
  it("fills the defaults of ARCHITECTURE.md", () => {
    const config = parseConfig(schema, {});
    expect(config.DATABASE_URL).toBe("postgresql://postgres@127.0.0.1:5432/herald");
    expect(config.KAFKA_BROKERS).toEqual(["127.0.0.1:9092"]);
    expect(portOfUrl(config.CONTACTS_URL)).toBe(50052);
    expect(config.MIGRATE_ON_START).toBe(true);
    expect(parseConfig(schema, { MIGRATE_ON_START: "false" }).MIGRATE_ON_START).toBe(false);
  });

  it("names every bad variable", () => {
    expect(() => parseConfig(schema, { DATABASE_URL: "not a url", KAFKA_BROKERS: "a,b", REDIS_URL: "http://x" })).toThrow(ConfigError);
    try {
      parseConfig(schema, { DATABASE_URL: "not a url", KAFKA_BROKERS: "a,b", REDIS_URL: "http://x" });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain("DATABASE_URL");
      expect(message).toContain("KAFKA_BROKERS");
      expect(message).toContain("REDIS_URL");
    }
  });

  it("reads booleans the way people write them", () => {
    const flags = z.object({ FLAG: envBoolean(false) });
    expect(parseConfig(flags, { FLAG: "false" }).FLAG).toBe(false);
    expect(parseConfig(flags, { FLAG: "true" }).FLAG).toBe(true);
    expect(parseConfig(flags, { FLAG: "1" }).FLAG).toBe(true);
    expect(parseConfig(flags, {}).FLAG).toBe(false);
    expect(() => parseConfig(flags, { FLAG: "maybe" })).toThrow(/FLAG/);
  });

  it("refuses ports that are not ports", () => {
    const ports = z.object({ PORT: envPort(8080) });
    expect(parseConfig(ports, {}).PORT).toBe(8080);
    expect(parseConfig(ports, { PORT: "9000" }).PORT).toBe(9000);
    expect(() => parseConfig(ports, { PORT: "0" })).toThrow(/PORT/);
    expect(() => parseConfig(ports, { PORT: "65536" })).toThrow(/PORT/);
    expect(() => parseConfig(ports, { PORT: "http" })).toThrow(/PORT/);
  });
});
