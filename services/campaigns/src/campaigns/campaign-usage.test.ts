import { describe, expect, it } from "vitest";
import { campaignUsesEvent, campaignUsesField, campaignUsesSegment } from "./campaigns.js";

const tree = (field: string, operator = "exists", value: string | number = 0) => ({
  logic: "AND",
  groups: [{ filters: [{ field, operator, value }] }],
});

describe("what a campaign uses", () => {
  it("finds a field in the audience condition or read by the Liquid", () => {
    expect(campaignUsesField({ audienceCondition: tree("data.plan", "equals", "gold"), subject: "", body: "" }, "data.plan")).toBe(true);
    expect(campaignUsesField({ audienceCondition: null, subject: "Hi {{ firstName }}", body: "" }, "data.firstName")).toBe(true);
    expect(campaignUsesField({ audienceCondition: null, subject: "", body: "{% if data.tier == 'a' %}x{% endif %}" }, "data.tier")).toBe(
      true,
    );
    expect(campaignUsesField({ audienceCondition: null, subject: "", body: '{{ data["first name"] }}' }, "data.first name")).toBe(true);
    expect(campaignUsesField({ audienceCondition: null, subject: "plan", body: "{{ planner }}" }, "data.plan")).toBe(false);
  });

  it("finds an event and a segment in the audience condition, and the segment of a SEGMENT audience", () => {
    expect(campaignUsesEvent({ audienceCondition: tree("event.signup", "triggered") }, "signup")).toBe(true);
    expect(campaignUsesEvent({ audienceCondition: tree("data.plan") }, "signup")).toBe(false);
    const id = "11111111-1111-4111-8111-111111111111";
    expect(campaignUsesSegment({ audienceCondition: null, segmentId: id }, id.toUpperCase())).toBe(true);
    expect(campaignUsesSegment({ audienceCondition: tree(`segment.${id}`, "memberOfSegment"), segmentId: null }, id)).toBe(true);
  });
});
