/** A kind of queued work the job worker claims and runs (imports, bulk jobs, project wipes). */
export interface JobRunner {
  readonly kind: string;
  /** Leases the next job of this kind to `owner`, or undefined when there is none. */
  claim(owner: string): Promise<ClaimedJob | undefined>;
}

export interface ClaimedJob {
  id: string;
  /**
   * Runs the job, committing its progress batch by batch. Returns when it is done,
   * when `signal` aborts (after releasing the lease so that another worker resumes at
   * once), or when another worker took the lease over (see LeaseLost).
   */
  run(signal: AbortSignal): Promise<void>;
}

/** The worker no longer holds the job's lease: its batch rolled back and it leaves the job to the new holder. */
export class LeaseLost extends Error {
  override readonly name = "LeaseLost";
}

/** A job whose worker died this many times while running it fails rather than being retried forever. */
export const maxJobAttempts = 5;
