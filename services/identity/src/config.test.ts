import { ConfigError } from "@herald/platform";
import { describe, expect, it } from "vitest";
import { loadConfig as loadEnvironment, reputationThresholdsOf } from "./config.js";
import { defaultReputationThresholds } from "./domain/reputation-guard.js";

/** NODE_ENV=test: an unset NODE_ENV means production, which requires the secrets. */
const loadConfig = (env: NodeJS.ProcessEnv) => loadEnvironment({ NODE_ENV: "test", ...env });

describe("identity configuration: the reputation guard", () => {
  it("defaults to a 7-day window, 1,000 emails, and warnings at 5 % and 0.075 %, suspensions at 10 % and 0.15 %", () => {
    expect(reputationThresholdsOf(loadConfig({}))).toEqual(defaultReputationThresholds);
  });

  it("reads every threshold in percent", () => {
    const thresholds = reputationThresholdsOf(
      loadConfig({
        REPUTATION_WINDOW_DAYS: "30",
        REPUTATION_MIN_VOLUME: "40",
        REPUTATION_WARN_BOUNCE_PERCENT: "2",
        REPUTATION_WARN_COMPLAINT_PERCENT: "0.05",
        REPUTATION_SUSPEND_BOUNCE_PERCENT: "4",
        REPUTATION_SUSPEND_COMPLAINT_PERCENT: "0.1",
      }),
    );
    expect(thresholds).toEqual({
      windowDays: 30,
      minVolume: 40,
      warnBounceRate: 0.02,
      warnComplaintRate: 0.0005,
      suspendBounceRate: 0.04,
      suspendComplaintRate: 0.001,
    });
  });

  it("refuses a warning above its suspension, a rate outside (0, 100] and a window beyond 90 days", () => {
    expect(() => loadConfig({ REPUTATION_WARN_BOUNCE_PERCENT: "12" })).toThrow(/REPUTATION_WARN_BOUNCE_PERCENT: must not exceed/);
    expect(() => loadConfig({ REPUTATION_SUSPEND_COMPLAINT_PERCENT: "0.01" })).toThrow(/REPUTATION_WARN_COMPLAINT_PERCENT/);
    expect(() => loadConfig({ REPUTATION_SUSPEND_BOUNCE_PERCENT: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ REPUTATION_SUSPEND_BOUNCE_PERCENT: "101" })).toThrow(/REPUTATION_SUSPEND_BOUNCE_PERCENT/);
    expect(() => loadConfig({ REPUTATION_WINDOW_DAYS: "91" })).toThrow(/REPUTATION_WINDOW_DAYS/);
    expect(() => loadConfig({ REPUTATION_MIN_VOLUME: "0" })).toThrow(/REPUTATION_MIN_VOLUME/);
  });
});
