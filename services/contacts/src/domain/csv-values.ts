import type { JsonValue } from "./contact-data.js";

const booleanWords: Record<string, boolean> = { true: true, yes: true, false: false, no: false };

// Plain integers and decimals: an optional minus, no leading zero (but "0" and "0.5"), no plus sign, no exponent.
const plainNumber = /^-?(0|[1-9]\d*)(\.\d+)?$/;

// A double holds 15 significant digits exactly; longer digit strings (card or phone numbers) would lose digits.
const maxExactDigits = 15;

/**
 * A CSV cell as stored (SPEC.md "CSV import rules" 4): true/false/yes/no in any case
 * become booleans; plain integers and decimals become numbers; a leading zero, a plus
 * sign, scientific notation and numbers too long to keep every digit stay strings;
 * ISO dates stay strings (the field registry types them as dates); an empty cell is
 * "" and so ignored by the data rules.
 */
export function typeCsvValue(cell: string): JsonValue {
  const boolean = booleanWords[cell.toLowerCase()];
  if (boolean !== undefined) return boolean;
  if (plainNumber.test(cell) && cell.replace(/[-.]/g, "").replace(/^0+/, "").length <= maxExactDigits) return Number(cell);
  return cell;
}
