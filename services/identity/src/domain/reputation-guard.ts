/** The reputation guard's configuration (REPUTATION_* variables, docs/operations.md). Rates are fractions: 0.05 is 5 %. */
export interface ReputationThresholds {
  windowDays: number;
  /** Delivered attempts in the window below which a project is not judged. */
  minVolume: number;
  warnBounceRate: number;
  warnComplaintRate: number;
  suspendBounceRate: number;
  suspendComplaintRate: number;
}

export const defaultReputationThresholds: ReputationThresholds = {
  windowDays: 7,
  minVolume: 1000,
  warnBounceRate: 0.05,
  warnComplaintRate: 0.00075,
  suspendBounceRate: 0.1,
  suspendComplaintRate: 0.0015,
};

/** A project's counts over the window: attempts handed to the relay, permanent bounces, complaints. */
export interface WindowCounts {
  sent: bigint;
  bounced: bigint;
  complained: bigint;
}

export interface GuardRates {
  /** Permanent bounces over delivered attempts. */
  bounceRate: number;
  /** Complaints over delivered emails (attempts that did not bounce). */
  complaintRate: number;
}

export type Verdict = { level: "ok"; rates: GuardRates } | { level: "warn" | "suspend"; rates: GuardRates; reason: string };

export function guardRatesOf(counts: WindowCounts): GuardRates {
  const sent = Number(counts.sent);
  const delivered = sent - Number(counts.bounced);
  return {
    bounceRate: sent > 0 ? Number(counts.bounced) / sent : 0,
    complaintRate: delivered > 0 ? Number(counts.complained) / delivered : 0,
  };
}

/** A rate as people read it: 12.5 %, 0.2 %, 0.075 %. */
export const percent = (rate: number): string => `${Number((rate * 100).toPrecision(3))} %`;

/**
 * What the guard does about a project's window: nothing below the minimum volume (nobody is judged on five
 * emails), suspend past either suspension threshold, warn past either warning threshold. The reason names the
 * rate that decided, the bounce rate first when both passed.
 */
export function judgeReputation(counts: WindowCounts, thresholds: ReputationThresholds): Verdict {
  const rates = guardRatesOf(counts);
  if (Number(counts.sent) < thresholds.minVolume) return { level: "ok", rates };
  const window = `over the last ${thresholds.windowDays} ${thresholds.windowDays === 1 ? "day" : "days"}`;
  const bounces = `bounce rate of ${percent(rates.bounceRate)} ${window}`;
  const complaints = `complaint rate of ${percent(rates.complaintRate)} ${window}`;
  if (rates.bounceRate >= thresholds.suspendBounceRate)
    return { level: "suspend", rates, reason: `Sending is suspended: a ${bounces} reached ${percent(thresholds.suspendBounceRate)}` };
  if (rates.complaintRate >= thresholds.suspendComplaintRate)
    return {
      level: "suspend",
      rates,
      reason: `Sending is suspended: a ${complaints} reached ${percent(thresholds.suspendComplaintRate)}`,
    };
  if (rates.bounceRate >= thresholds.warnBounceRate)
    return { level: "warn", rates, reason: `A ${bounces} reached the warning level of ${percent(thresholds.warnBounceRate)}` };
  if (rates.complaintRate >= thresholds.warnComplaintRate)
    return { level: "warn", rates, reason: `A ${complaints} reached the warning level of ${percent(thresholds.warnComplaintRate)}` };
  return { level: "ok", rates };
}
