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
