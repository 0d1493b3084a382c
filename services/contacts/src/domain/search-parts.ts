// What a contact search asks of the trigram index on email. pg_trgm's GIN index answers `email LIKE '%s%'` by
// intersecting the posting lists of every trigram of s, and it reads each list whole: a trigram that most addresses
// hold ("com", "gma", or "use" in user1@…, user2@…) costs thousands of index pages however rare the rest of s is
// (8,400 pages, 65 ms a statement, at 10 million contacts; docs/benchmarks.md). So when s holds a trigram the
// deployment's addresses share, the index is asked only for the runs of s made of the other trigrams, and the match
// itself is tested on the rows it returns.

/** Three word characters: a trigram pg_trgm takes from within a word, unpadded. */
const wordTrigram = /^[a-z0-9]{3}$/;

/** Search parts at most: each one is one more LIKE, and one more statement variant to prepare. */
const maxParts = 4;

/**
 * The trigrams pg_trgm takes from `LIKE '%search%'`: those of each word (a run of letters and digits), padded on the
 * side where a non-word character bounds it within the search (two spaces before, one after), and not on a side the
 * wildcard bounds. Only ASCII words are modelled: a search with other characters keeps its trigrams unknown there,
 * which only makes the choice below more conservative.
 */
export function likeTrigrams(search: string): Set<string> {
  const trigrams = new Set<string>();
  for (const match of search.matchAll(/[a-z0-9]+/g)) {
    const start = match.index;
    const end = start + match[0].length;
    const padded = `${start > 0 ? "  " : ""}${match[0]}${end < search.length ? " " : ""}`;
    for (let index = 0; index + 3 <= padded.length; index++) trigrams.add(padded.slice(index, index + 3));
  }
  return trigrams;
}

/**
 * The substrings of a (lower-cased) search to give the index in its place, or undefined to give it the search
 * itself: when none of its trigrams is common, or when every one is. Each part is a run of word characters whose
 * every trigram is uncommon, the longest first; any address that holds the search holds each of them.
 */
export function searchParts(search: string, common: ReadonlySet<string>): string[] | undefined {
  if (common.size === 0 || ![...likeTrigrams(search)].some((trigram) => common.has(trigram))) return undefined;
  const parts: string[] = [];
  let runStart = -1;
  // One step past the last trigram, where the slice is too short to be one, so that a run reaching the end is closed.
  for (let index = 0; index <= search.length - 2; index++) {
    const trigram = search.slice(index, index + 3);
    const selective = wordTrigram.test(trigram) && !common.has(trigram);
    if (selective && runStart < 0) runStart = index;
    if (!selective && runStart >= 0) {
      parts.push(search.slice(runStart, index + 2));
      runStart = -1;
    }
  }
  if (parts.length === 0) return undefined;
  return parts.sort((a, b) => b.length - a.length).slice(0, maxParts);
}
