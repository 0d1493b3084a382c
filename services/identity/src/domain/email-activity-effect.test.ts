import { describe, expect, it } from "vitest";
import { billingPeriodOf } from "./billing-period.js";
import { effectOfEmailActivity } from "./email-activity-effect.js";
import { reputationRates } from "./security-state.js";

describe("metering of email activity", () => {
  it("bills sends by category, received mail as inbound, and counts bounces and complaints per day", () => {
    expect(effectOfEmailActivity("email.sent", "campaign")).toEqual({ usage: "campaigns", daily: "sent", firstSend: true });
    expect(effectOfEmailActivity("email.sent", "workflow").usage).toBe("workflows");
    expect(effectOfEmailActivity("email.sent", "unspecified").usage).toBe("transactional");
    expect(effectOfEmailActivity("email.received", "unspecified")).toEqual({ usage: "inbound" });
    expect(effectOfEmailActivity("email.bounce", "transactional")).toEqual({ daily: "bounced" });
    // Refused at the relay's door, with no email.sent before it: an attempt as well as a bounce.
    expect(effectOfEmailActivity("email.bounce", "transactional", { refusedAtHandover: true })).toEqual({
      daily: "bounced",
      attempted: true,
    });
    expect(effectOfEmailActivity("email.complaint", "campaign")).toEqual({ daily: "complained" });
    expect(effectOfEmailActivity("email.open", "campaign")).toEqual({});
  });

  it("counts per UTC calendar month", () => {
    const { start, end } = billingPeriodOf(new Date("2026-12-31T23:59:59.999Z"));
    expect(start.toISOString()).toBe("2026-12-01T00:00:00.000Z");
    expect(end.toISOString()).toBe("2027-01-01T00:00:00.000Z");
  });

  it("gives zero rates while nothing was sent", () => {
    expect(reputationRates({ sent: 0n, bounced: 3n, complained: 1n })).toEqual({ bounceRate: 0, complaintRate: 0 });
    expect(reputationRates({ sent: 200n, bounced: 3n, complained: 1n })).toEqual({ bounceRate: 0.015, complaintRate: 0.005 });
  });
});
