/** The reputation window of the security state. */
export const securityWindowDays = 30;

/** Bounce and complaint rates over sent mail; zero while nothing was sent. */
export function reputationRates(counts: { sent: bigint; bounced: bigint; complained: bigint }): {
  bounceRate: number;
  complaintRate: number;
} {
  if (counts.sent === 0n) return { bounceRate: 0, complaintRate: 0 };
  const sent = Number(counts.sent);
  return { bounceRate: Number(counts.bounced) / sent, complaintRate: Number(counts.complained) / sent };
}

/** The reason recorded when an owner disables a project. */
export const disabledByOwner = "disabled by owner";
