import { describe, expect, it } from "vitest";
import { defaultReputationThresholds, judgeReputation, percent } from "./reputation-guard.js";

const counts = (sent: number, bounced: number, complained: number) => ({
  sent: BigInt(sent),
  bounced: BigInt(bounced),
  complained: BigInt(complained),
});

describe("the reputation guard's verdict", () => {
  const thresholds = defaultReputationThresholds;

  it("judges nobody below the minimum volume, however bad the rates", () => {
    expect(judgeReputation(counts(999, 500, 100), thresholds).level).toBe("ok");
  });

  it("warns at 5 % bounces and 0.075 % complaints, and suspends at 10 % and 0.15 %", () => {
    expect(judgeReputation(counts(1000, 49, 0), thresholds).level).toBe("ok");
    expect(judgeReputation(counts(1000, 50, 0), thresholds)).toMatchObject({ level: "warn", reason: expect.stringContaining("5 %") });
    expect(judgeReputation(counts(1000, 100, 0), thresholds)).toMatchObject({
      level: "suspend",
      reason: "Sending is suspended: a bounce rate of 10 % over the last 7 days reached 10 %",
    });
    // Complaints count over delivered emails: 2 of the 1,000 that did not bounce.
    expect(judgeReputation(counts(1000, 0, 1), thresholds).level).toBe("warn");
    expect(judgeReputation(counts(1000, 0, 2), thresholds)).toMatchObject({
      level: "suspend",
      reason: expect.stringMatching(/^Sending is suspended: a complaint rate of 0\.2 % .* reached 0\.15 %$/),
    });
  });

  it("names the bounce rate first when both rates pass, and reports both rates", () => {
    const verdict = judgeReputation(counts(2000, 400, 10), thresholds);
    expect(verdict.level).toBe("suspend");
    expect(verdict.level !== "ok" && verdict.reason).toContain("bounce rate of 20 %");
    expect(verdict.rates.bounceRate).toBe(0.2);
    expect(verdict.rates.complaintRate).toBeCloseTo(10 / 1600);
  });

  it("writes rates as people read them", () => {
    expect(percent(0.125)).toBe("12.5 %");
    expect(percent(0.00075)).toBe("0.075 %");
    expect(percent(1 / 3)).toBe("33.3 %");
  });
});
