/** How the queue spaces attempts at one email after temporary failures. */
export interface RetryPolicy {
  maxAttempts: number;
  /** The wait after the first failure; each further failure doubles it. */
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * The wait before the next attempt, after `attempts` attempts failed: exponential, capped,
 * with "equal jitter" (half fixed, half random) so that emails that failed together
 * (a relay that went away) do not all come back in the same instant.
 */
export function retryDelayMs(policy: RetryPolicy, attempts: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Whether another attempt is allowed after `attempts` attempts. */
export const canRetry = (policy: RetryPolicy, attempts: number): boolean => attempts < policy.maxAttempts;
