import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/** Where Debian's `chromium` package puts the browser; playwright-core drives it (no browser download). */
export const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/**
 * The browser the dashboard's end-to-end tests drive: Debian's `chromium`, installed with
 * apt-get when missing. Throws when it cannot be installed: the browser tests are part of
 * `npm test`, and must fail rather than be skipped.
 */
export function ensureChromium(log: (message: string) => void): string {
  if (existsSync(chromiumPath)) return chromiumPath;
  log(`chromium: not at ${chromiumPath}; installing Debian's package with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  try {
    execFileSync("apt-get", ["update", "-q"], { stdio: "ignore", env, timeout: 300_000 });
    execFileSync("apt-get", ["install", "-y", "-q", "--no-install-recommends", "chromium"], { stdio: "ignore", env, timeout: 600_000 });
  } catch (error) {
    throw new Error(`could not install Chromium with apt-get (the dashboard's browser tests need it): ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (!existsSync(chromiumPath)) throw new Error(`apt-get installed chromium, but ${chromiumPath} does not exist`);
  return chromiumPath;
}
