import { retentionWindowOf } from "@herald/platform";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("contacts configuration", () => {
  it("reads the events' retention window with its bounds, refusing a default outside them", () => {
    const config = loadConfig({});
    expect(retentionWindowOf(config, "EVENTS")).toEqual({ defaultDays: 730, minDays: 1, maxDays: 730 });
    expect(config.RETENTION_INTERVAL_MS).toBe(3_600_000);
    const custom = loadConfig({ RETENTION_EVENTS_DAYS: "90", RETENTION_EVENTS_MIN_DAYS: "7", RETENTION_EVENTS_MAX_DAYS: "365" });
    expect(retentionWindowOf(custom, "EVENTS")).toEqual({ defaultDays: 90, minDays: 7, maxDays: 365 });
    expect(() => loadConfig({ RETENTION_EVENTS_MAX_DAYS: "365" })).toThrow(/RETENTION_EVENTS_DAYS: must lie within/);
    expect(() => loadConfig({ RETENTION_EVENTS_MIN_DAYS: "800" })).toThrow(/RETENTION_EVENTS_DAYS: must lie within/);
    expect(() => loadConfig({ RETENTION_EVENTS_DAYS: "0" })).toThrow(/RETENTION_EVENTS_DAYS/);
    expect(() => loadConfig({ RETENTION_INTERVAL_MS: "10" })).toThrow(/RETENTION_INTERVAL_MS/);
  });

  it("reads the common search trigrams hourly unless told otherwise", () => {
    expect(loadConfig({}).SEARCH_TRIGRAMS_INTERVAL_MS).toBe(3_600_000);
    expect(loadConfig({ SEARCH_TRIGRAMS_INTERVAL_MS: "10000" }).SEARCH_TRIGRAMS_INTERVAL_MS).toBe(10_000);
    expect(() => loadConfig({ SEARCH_TRIGRAMS_INTERVAL_MS: "10" })).toThrow(/SEARCH_TRIGRAMS_INTERVAL_MS/);
  });
});
