import { describe, expect, it } from "vitest";
import { checkCampaignFields } from "./campaign-fields.js";
import { mayCampaign, requireCampaignMay } from "./campaign-status.js";

const valid = { name: "News", subject: "Hi", body: "<p>Hi</p>", from: "news@Example.COM", audienceType: "ALL" as const };

describe("checkCampaignFields", () => {
  it("accepts a complete campaign, lower-casing the sender's domain and defaulting the type", () => {
    const result = checkCampaignFields(valid);
    expect(result.ok && result.fields).toMatchObject({
      fromAddress: "news@example.com",
      type: "MARKETING",
      audienceCondition: null,
      segmentId: null,
    });
  });

  it("names every missing field", () => {
    const result = checkCampaignFields({});
    expect(result.ok ? [] : result.violations.map((v) => v.field)).toEqual(["name", "subject", "body", "from", "audienceType"]);
  });

  it("needs a segment id for SEGMENT and a condition for FILTERED, and drops the other audience's field", () => {
    const segment = checkCampaignFields({ ...valid, audienceType: "SEGMENT" });
    expect(segment.ok ? [] : segment.violations.map((v) => v.field)).toEqual(["segmentId"]);
    const filtered = checkCampaignFields({ ...valid, audienceType: "FILTERED" });
    expect(filtered.ok ? [] : filtered.violations.map((v) => v.field)).toEqual(["audienceCondition"]);
    const all = checkCampaignFields({ ...valid, segmentId: "00000000-0000-4000-8000-000000000000", audienceCondition: { logic: "AND" } });
    expect(all.ok && all.fields).toMatchObject({ segmentId: null, audienceCondition: null });
  });

  it("refuses bad addresses, a subject with a line break and over-long fields", () => {
    const result = checkCampaignFields({ ...valid, from: "nobody", replyTo: "x", subject: "a\nb", name: "n".repeat(201) });
    expect(result.ok ? [] : result.violations.map((v) => v.field).sort()).toEqual(["from", "name", "replyTo", "subject"]);
  });
});

describe("campaign status moves", () => {
  it("allows edits in DRAFT and SCHEDULED, deletes outside SCHEDULED and SENDING, sends from DRAFT, cancels SCHEDULED and SENDING", () => {
    expect(["DRAFT", "SCHEDULED", "SENDING", "SENT", "CANCELLED"].map((s) => mayCampaign("update", s))).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(["DRAFT", "SCHEDULED", "SENDING", "SENT", "CANCELLED"].map((s) => mayCampaign("delete", s))).toEqual([
      true,
      false,
      false,
      true,
      true,
    ]);
    expect(["DRAFT", "SCHEDULED", "SENDING", "SENT", "CANCELLED"].map((s) => mayCampaign("send", s))).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(["DRAFT", "SCHEDULED", "SENDING", "SENT", "CANCELLED"].map((s) => mayCampaign("cancel", s))).toEqual([
      false,
      true,
      true,
      false,
      false,
    ]);
    expect(() => requireCampaignMay("send", "SENT")).toThrow(
      expect.objectContaining({ code: "CAMPAIGN_STATE_CONFLICT", kind: "conflict" }),
    );
  });
});
