/**
 * The name part of `segment.<slug>.entry` and `.exit` (SPEC.md "Events"): lower case,
 * each run of spaces a dash, every other character but a-z, 0-9 and dashes removed.
 * A name with nothing left (all punctuation or another script) falls back to the id,
 * so that no segment's events are named `segment..entry`.
 */
export function segmentSlug(name: string, id: string): string {
  const slug = name
    .toLowerCase()
    .trim()
    .replace(/\s+/g, "-")
    .replace(/[^a-z0-9-]/g, "")
    .replace(/-{2,}/g, "-")
    .replace(/^-|-$/g, "");
  return slug === "" ? id : slug;
}
