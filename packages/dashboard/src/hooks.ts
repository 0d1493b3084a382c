import { useCallback, useEffect, useState } from "react";
import { messageOf } from "./api";

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when its dependencies change, and on reload(); keeps the last data while reloading. With `ready` false it
 * waits (loading) until it turns true: a panel below the first screen's figures asks after them.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], ready = true): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what `load` depends on.
  useEffect(() => {
    if (!ready) return;
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error: messageOf(error), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, generation, ready]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** Polls `load` every `intervalMs` while `active` holds, for jobs, domains and executions. */
export function usePoll(active: boolean, intervalMs: number, reload: () => void): void {
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(reload, intervalMs);
    return () => clearInterval(timer);
  }, [active, intervalMs, reload]);
}
