/**
 * The send queue's lanes (docs/decisions.md "Lanes, fair share and destinations"). `urgent` holds what a person
 * waits for: transactional mail (/v1/send) and workflow mail (a welcome email, a sign-in link); `bulk` holds
 * campaign mail. Account emails have a queue and sender of their own (system-mail/), so no lane of this queue
 * ever stands in front of them.
 */
export type Lane = "urgent" | "bulk";

export const lanes: readonly Lane[] = ["urgent", "bulk"];

/** The category is the email row's billing category (TRANSACTIONAL, CAMPAIGN or WORKFLOW). */
export const laneOf = (category: string): Lane => (category === "CAMPAIGN" ? "bulk" : "urgent");

/**
 * What bulk mail may take of a dispatcher: the rest after the urgent lane's reserved share of its
 * concurrency and of its rate, and at least one send and 0.1 email a second, so that a campaign always moves.
 * The urgent lane may use everything, its share and what bulk mail leaves idle.
 */
export function bulkAllowance(limits: { concurrency: number; ratePerSecond: number; urgentShare: number }): {
  concurrency: number;
  ratePerSecond: number;
} {
  const share = Math.min(Math.max(limits.urgentShare, 0), 1);
  return {
    concurrency: Math.max(1, limits.concurrency - Math.ceil(limits.concurrency * share)),
    ratePerSecond: Math.max(0.1, limits.ratePerSecond * (1 - share)),
  };
}

/**
 * Where the next bulk claim starts its round of projects: after the last project this claim served, in the
 * claim's own order (project ids ascending from the previous cursor, wrapping round). So a claim that could
 * not serve every project with due mail (more of them than emails it may claim) leaves off where the next
 * one picks up, and no project waits more than a round of claims.
 */
export function nextBulkCursor(cursor: string, servedProjectIds: readonly string[]): string {
  if (servedProjectIds.length === 0) return cursor;
  let lastAfter: string | undefined;
  let lastWrapped: string | undefined;
  for (const id of servedProjectIds) {
    if (id > cursor) {
      if (lastAfter === undefined || id > lastAfter) lastAfter = id;
    } else if (lastWrapped === undefined || id > lastWrapped) lastWrapped = id;
  }
  return lastWrapped ?? lastAfter ?? cursor;
}

/** Before every project id: a first claim's round starts at the first project. */
export const firstBulkCursor = "00000000-0000-0000-0000-000000000000";
