import { useEffect, useState } from "react";

/**
 * Hash routes (#/contacts/123), so that the gateway serves one index.html for the whole app and
 * a reload keeps the page. Twenty lines instead of a router library: the app has a dozen flat routes.
 */
export function useRoute(): string[] {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const onChange = () => setHash(window.location.hash);
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return hash.replace(/^#\/?/, "").split("?")[0]?.split("/").filter(Boolean).map(decodeURIComponent) ?? [];
}

export function navigate(path: string): void {
  window.location.hash = `#${path}`;
}

/** The query of the hash route: #/reset?token=… */
export function routeQuery(): URLSearchParams {
  return new URLSearchParams(window.location.hash.split("?")[1] ?? "");
}

/**
 * One of the route's query parameters as state (#/contacts?search=ada), so that a reload or a shared link restores a list's
 * filters. Setting it replaces the history entry (a search typed letter by letter is not a dozen Back presses); a value equal
 * to `fallback` leaves the link.
 */
export function useRouteParam(name: string, fallback = ""): [string, (value: string) => void] {
  useRoute();
  const value = routeQuery().get(name) ?? fallback;
  const set = (next: string) => {
    const [path = "", search = ""] = window.location.hash.split("?");
    const query = new URLSearchParams(search);
    if (next === fallback) query.delete(name);
    else query.set(name, next);
    const rest = query.toString();
    window.history.replaceState(window.history.state, "", `${path || "#/"}${rest ? `?${rest}` : ""}`);
    // replaceState fires no hashchange: tell useRoute's listeners, the page's included.
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  };
  return [value, set];
}

/** A route parameter limited to a list of choices: anything else in the link reads as the first. */
export function useRouteChoice<T extends string>(name: string, choices: readonly T[]): [T, (value: T) => void] {
  const [value, set] = useRouteParam(name, choices[0]);
  return [(choices as readonly string[]).includes(value) ? (value as T) : (choices[0] as T), set];
}
