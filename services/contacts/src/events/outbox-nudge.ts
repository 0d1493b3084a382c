/**
 * Nudges the outbox relay at most once per `intervalMs`: at once when it was not
 * nudged lately, otherwise once at the end of the interval. Each nudge costs the relay
 * a publishing transaction and a Kafka request, so a nudge per tracked event would
 * cost more than the event itself under load; coalesced, one batch carries many
 * events, and an event still leaves within about `intervalMs`.
 */
export function createThrottledNudge(nudge: () => void, intervalMs: number, now: () => number = Date.now): () => void {
  let last = Number.NEGATIVE_INFINITY;
  let scheduled = false;
  const fire = () => {
    scheduled = false;
    last = now();
    nudge();
  };
  return () => {
    if (scheduled) return;
    const wait = last + intervalMs - now();
    if (wait <= 0) return fire();
    scheduled = true;
    setTimeout(fire, wait).unref();
  };
}
