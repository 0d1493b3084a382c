import { z } from "zod";
import { SendFailure } from "../providers/mail-provider.js";

/**
 * Destinations: where a recipient's mail ends up, as mailbox providers throttle senders. A destination is a
 * named group of MX hosts (`google`: `*.google.com`, `*.googlemail.com`), or, for a host no group names, the
 * recipient domain's first MX host itself (or the domain, when it has no MX that could be read). Each has its
 * own limits of concurrent sends and of messages a second, per dispatcher, and a temporary refusal backs off
 * that destination only (docs/decisions.md "Lanes, fair share and destinations").
 */
export interface DestinationLimits {
  /** Sends to the destination at once, per dispatcher. */
  concurrency: number;
  /** Messages a second to the destination, per dispatcher. */
  ratePerSecond: number;
}

export interface DestinationGroup extends DestinationLimits {
  /** MX host patterns: `*.google.com` is any host under google.com; a name without `*.` is that host alone. */
  mx: string[];
}

/** The groups by name, and `default`: the limits of each MX host that no group names. */
export interface DestinationTable {
  groups: Record<string, DestinationGroup>;
  default: DestinationLimits;
}

const limits = { concurrency: z.number().int().min(1).max(10_000), ratePerSecond: z.number().min(0.1).max(1_000_000) };

const mxPattern = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, {
    message: "must be a host name or *.<domain>",
  });

const groupName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, { message: "must be lower-case letters, digits, - or _" });

/**
 * What SEND_DESTINATIONS holds: a JSON object of groups by name, each `{ "mx": [...], "concurrency": n,
 * "ratePerSecond": n }`, and optionally `default` with the limits alone. A group of the default table named again
 * replaces it; `null` removes it.
 */
export const destinationOverridesSchema = z
  .record(z.string(), z.unknown())
  .superRefine((entries, context) => {
    for (const [name, value] of Object.entries(entries)) {
      const parsed =
        name === "default"
          ? z.object(limits).strict().safeParse(value)
          : groupName.safeParse(name).success
            ? z
                .object({ mx: z.array(mxPattern).min(1), ...limits })
                .strict()
                .nullable()
                .safeParse(value)
            : undefined;
      if (!parsed) context.addIssue({ code: "custom", path: [name], message: "a group's name must be lower-case letters, digits, - or _" });
      else if (!parsed.success) {
        for (const issue of parsed.error.issues) context.addIssue({ code: "custom", path: [name, ...issue.path], message: issue.message });
      }
    }
  })
  .transform((entries) => entries as Record<string, DestinationGroup | DestinationLimits | null>);

export type DestinationOverrides = z.infer<typeof destinationOverridesSchema>;

/**
 * The documented default (docs/operations.md "Destinations"): the large mailbox providers' published or
 * commonly observed tolerance for one sending IP, kept modest since every dispatcher replica has its own.
 */
export const defaultDestinationTable: DestinationTable = {
  groups: {
    google: { mx: ["*.google.com", "*.googlemail.com"], concurrency: 20, ratePerSecond: 50 },
    microsoft: { mx: ["*.outlook.com", "*.hotmail.com"], concurrency: 10, ratePerSecond: 20 },
    yahoo: { mx: ["*.yahoodns.net", "*.yahoo.com"], concurrency: 10, ratePerSecond: 20 },
    apple: { mx: ["*.icloud.com", "*.me.com"], concurrency: 10, ratePerSecond: 20 },
    gmx: { mx: ["*.gmx.net", "*.web.de", "*.ionos.de", "*.kundenserver.de"], concurrency: 5, ratePerSecond: 10 },
  },
  default: { concurrency: 20, ratePerSecond: 100 },
};

/** The default table with an operator's overrides (SEND_DESTINATIONS) laid over it. */
export function destinationTableOf(overrides: DestinationOverrides, base: DestinationTable = defaultDestinationTable): DestinationTable {
  const groups = { ...base.groups };
  let defaults = base.default;
  for (const [name, value] of Object.entries(overrides)) {
    if (name === "default" && value) defaults = { concurrency: value.concurrency, ratePerSecond: value.ratePerSecond };
    else if (value === null) delete groups[name];
    else if ("mx" in value) groups[name] = value;
  }
  return { groups, default: defaults };
}

const matches = (pattern: string, host: string): boolean => (pattern.startsWith("*.") ? host.endsWith(pattern.slice(1)) : host === pattern);

/** The destination of a recipient domain, by its MX hosts (best first; none when it has none that could be read). */
export function destinationOf(
  table: DestinationTable,
  recipientDomain: string,
  mxHosts: readonly string[],
): { name: string; limits: DestinationLimits } {
  const hosts = mxHosts.map((host) => host.toLowerCase().replace(/\.$/, ""));
  for (const host of hosts) {
    for (const [name, group] of Object.entries(table.groups)) {
      if (group.mx.some((pattern) => matches(pattern, host))) return { name, limits: group };
    }
  }
  return { name: hosts[0] ?? recipientDomain.toLowerCase(), limits: table.default };
}

/** The replies with which mailbox providers defer a sender: 421 (service not available, "try again later"), 450 and 451. */
const deferralCodes = new Set([421, 450, 451]);

/**
 * Whether a failed send is the destination asking us to slow down: a temporary SMTP reply of deferralCodes. 452
 * (a full mailbox, too many recipients) is about one address, a connection or timeout failure is the relay's,
 * and a permanent refusal is about the email or the address: none of them backs the destination off.
 */
export const isDestinationDeferral = (error: unknown): boolean =>
  error instanceof SendFailure &&
  !error.permanent &&
  error.reason === "rejected" &&
  error.responseCode !== undefined &&
  deferralCodes.has(error.responseCode);

/** How long a destination is left alone after its `consecutive`-th deferral in a row: doubling from `baseMs`, up to 16 times it. */
export const destinationBackoffMs = (baseMs: number, consecutive: number): number =>
  baseMs * 2 ** Math.min(Math.max(consecutive - 1, 0), 4);
