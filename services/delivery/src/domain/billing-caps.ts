/** The billing categories a cap bounds: the email's category, and the name of its cap (identity's BillingLimits). */
export const capNameOf = {
  TRANSACTIONAL: "transactional",
  CAMPAIGN: "campaigns",
  WORKFLOW: "workflows",
  INBOUND: "inbound",
} as const;

export type MeteredCategory = keyof typeof capNameOf;

export const isMeteredCategory = (category: string): category is MeteredCategory => Object.hasOwn(capNameOf, category);

/** One project's category: the unit a cap bounds (per UTC month). */
export const usageKey = (projectId: string, category: string): string => `${projectId} ${category}`;

/** A category's cap and what the month has used of it. */
export interface CapStanding {
  cap: bigint;
  used: bigint;
}

/** A call refused because it would go past a cap: the first such category. */
export interface CapExceeded {
  projectId: string;
  category: MeteredCategory;
  cap: bigint;
  used: bigint;
  /** Emails the call would have added. */
  wanted: number;
}

/** The emails a call would add per usage key (only metered categories count). */
export function wantedOf(rows: ReadonlyArray<{ projectId: string; category: string }>): Map<string, number> {
  const wanted = new Map<string, number>();
  for (const row of rows) {
    if (!isMeteredCategory(row.category)) continue;
    const key = usageKey(row.projectId, row.category);
    wanted.set(key, (wanted.get(key) ?? 0) + 1);
  }
  return wanted;
}

/**
 * Whether a call fits: every capped category it adds to stays within its cap once its
 * emails are added. Answers the first category that would go past, or undefined.
 */
export function exceededBy(wanted: ReadonlyMap<string, number>, standings: ReadonlyMap<string, CapStanding>): CapExceeded | undefined {
  for (const [key, count] of wanted) {
    const standing = standings.get(key);
    if (!standing || count === 0) continue;
    if (standing.used + BigInt(count) > standing.cap) {
      const [projectId = "", category = ""] = key.split(" ");
      return { projectId, category: category as MeteredCategory, cap: standing.cap, used: standing.used, wanted: count };
    }
  }
  return undefined;
}

/** Counts a granted call's emails into the standings, so that the calls after it in a batch see them. */
export function spend(wanted: ReadonlyMap<string, number>, standings: Map<string, CapStanding>): void {
  for (const [key, count] of wanted) {
    const standing = standings.get(key);
    if (standing) standings.set(key, { ...standing, used: standing.used + BigInt(count) });
  }
}

/** The first instant of the UTC month after the one that holds `now`: when the month's caps free up. */
export const nextMonthOf = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
