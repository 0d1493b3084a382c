import type { UsageCategory } from "./usage-category.js";

/** The category a delivery event names (EmailCategory of email_activity.proto, by name). */
export type ActivityCategory = "unspecified" | "transactional" | "campaign" | "workflow" | "inbound";

/** What one email-activity event changes in identity's counters. */
export interface EmailActivityEffect {
  /** Counted against this monthly billing category. */
  usage?: UsageCategory;
  /** Counted in the day's reputation figures. */
  daily?: "sent" | "bounced" | "complained";
  /** A sent email also completes the "first email" onboarding step. */
  firstSend?: boolean;
  /** A bounce at the relay's door is an attempt too: counted in the day's `sent` as well as `bounced`. */
  attempted?: boolean;
}

const usageOfCategory: Record<ActivityCategory, UsageCategory> = {
  // A send without a category is a producer's slip; billing it as transactional undercounts nothing.
  unspecified: "transactional",
  transactional: "transactional",
  campaign: "campaigns",
  workflow: "workflows",
  inbound: "inbound",
};

export function effectOfEmailActivity(
  type: string,
  category: ActivityCategory,
  details: { refusedAtHandover?: boolean } = {},
): EmailActivityEffect {
  switch (type) {
    case "email.sent":
      return { usage: usageOfCategory[category], daily: "sent", firstSend: true };
    case "email.received":
      return { usage: "inbound" };
    case "email.bounce":
      return details.refusedAtHandover ? { daily: "bounced", attempted: true } : { daily: "bounced" };
    case "email.complaint":
      return { daily: "complained" };
    default:
      return {};
  }
}
