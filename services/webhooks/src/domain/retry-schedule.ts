/** The jitter of every wait: ±10 %. */
const jitter = 0.1;

/**
 * When the next attempt is due after `attemptsMade` attempts failed, or undefined when the schedule is spent
 * and the message has failed: attempt n waits the schedule's nth entry (the first attempt its first), ±10 %.
 */
export function nextAttemptAfter(schedule: readonly number[], attemptsMade: number, now: number, random = Math.random): Date | undefined {
  const wait = schedule[attemptsMade];
  if (wait === undefined) return undefined;
  return new Date(now + wait * (1 - jitter + 2 * jitter * random()));
}
