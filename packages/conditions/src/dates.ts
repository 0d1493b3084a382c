import type { TimeUnit } from "./types.js";

/**
 * An instant as both back ends compare it: epoch milliseconds against the timestamp
 * columns, and canonical text `YYYY-MM-DDTHH:MM:SS.sssZ` against dates stored in
 * data (fixed width, so text order is time order).
 */
export interface Instant {
  epochMs: number;
  iso: string;
}

export const timeUnits: readonly TimeUnit[] = ["minutes", "hours", "days", "weeks"];

const unitMs: Record<TimeUnit, number> = {
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 604_800_000,
};

export const isTimeUnit = (value: unknown): value is TimeUnit => (timeUnits as readonly unknown[]).includes(value);

// The whole rule is one pattern, so that SQL (the contacts service's herald_condition_instant) reads it exactly as JavaScript does.
const year = "(0[1-9][0-9]{2}|[1-9][0-9]{3})"; // 0100–9999
const leapYear = "((0[1-9]|[1-9][0-9])(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)";
const monthAndDay = "((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)";
const time = "T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{3})?Z";

/**
 * `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS[.sss]Z` naming a real day (leap years
 * included) and time, in the years 0100–9999: the one rule of SPEC.md's type
 * inference, by which the contacts service types data and conditions compare dates.
 * Written for both JavaScript and PostgreSQL regular expressions.
 */
export const isoDatePattern = `^(${year}-${monthAndDay}|${leapYear}-02-29)(${time})?$`;

const isoDate = new RegExp(isoDatePattern);

/** The canonical text of an ISO date (see isoDatePattern; `YYYY-MM-DD` is midnight UTC), else undefined. */
export function canonicalInstant(value: string, dateTimeOnly: boolean): string | undefined {
  if (!isoDate.test(value) || (dateTimeOnly && value.length === 10)) return undefined;
  if (value.length === 10) return `${value}T00:00:00.000Z`;
  if (value.length === 20) return `${value.slice(0, 19)}.000Z`;
  return value;
}

/** A date as SPEC.md's type inference detects one (see isoDatePattern). */
export const isIsoDate = (value: string): boolean => canonicalInstant(value, false) !== undefined;

const earliest = Date.parse("0100-01-01T00:00:00.000Z");
const latest = Date.parse("9999-12-31T23:59:59.999Z");

/** The instant at `epochMs`, held within the years 0100–9999 that stored dates can name (so far windows stay comparable). */
export function instantAt(epochMs: number): Instant {
  if (Number.isNaN(epochMs)) throw new RangeError("The instant is not a valid date");
  const clamped = Math.min(latest, Math.max(earliest, Math.floor(epochMs)));
  return { epochMs: clamped, iso: new Date(clamped).toISOString() };
}

/** The instant `amount` units before `now`; a unit is a fixed number of milliseconds (a day is 24 hours). */
export const windowStart = (now: Date, amount: number, unit: TimeUnit): Instant => instantAt(now.getTime() - amount * unitMs[unit]);

/** The instant a canonical ISO text names. */
export const instantOfCanonical = (iso: string): Instant => ({ epochMs: Date.parse(iso), iso });
