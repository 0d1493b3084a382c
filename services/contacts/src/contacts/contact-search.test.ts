import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadCommonTrigrams } from "../db/common-trigrams.js";
import { contactPageSql } from "../db/contacts.js";
import { searchParts } from "../domain/search-parts.js";
import { type ContactsHarness, newProjectId, startContacts } from "../test-support/contacts-harness.js";

/**
 * Searches of GET /contacts that hold a trigram most addresses share: the index is asked for the rest of the search,
 * and the answer is the same as when it is asked for all of it.
 */
describe("contact search with common trigrams", () => {
  let harness: ContactsHarness;
  let common: ReadonlySet<string> = new Set();
  const projectId = newProjectId();
  const otherProjectId = newProjectId();
  // Enough that the trigram index, not the project's key, is the cheaper way to a rare address.
  const seeded = 20_000;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"), { worker: false, searchTrigrams: { common: () => common } });
    await harness.pool.query(
      `INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, 'user' || i || '@seed.test', true, '{}', now() - i * interval '1 second', now()
       FROM generate_series(1, $2::int) AS i`,
      [projectId, seeded],
    );
    await harness.pool.query(
      `INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at) VALUES
         (gen_random_uuid(), $1::uuid, 'xuser12@other.test', true, '{}', now(), now()),
         (gen_random_uuid(), $1::uuid, 'user12%_@odd.test', true, '{}', now(), now()),
         (gen_random_uuid(), $2::uuid, 'user12@seed.test', true, '{}', now(), now())`,
      [projectId, otherProjectId],
    );
    await harness.pool.query("ANALYZE contacts");
  });

  afterAll(() => harness?.stop());

  it("reads the trigrams most addresses share from a sample of the table", async () => {
    const loaded = await loadCommonTrigrams(harness.pool, { minRows: seeded / 2, sampleRows: 1_000_000 });
    for (const trigram of ["use", "ser", "see", "eed", "tes", "est", "  u", " us"]) expect(loaded).toContain(trigram);
    // user12…: held by 1,111 of the 20,000 (user12, user120–129, user1200–1299, user12000–12999).
    expect(loaded).not.toContain("r12");
    expect(await loadCommonTrigrams(harness.pool, { minRows: 10 * seeded, sampleRows: 1_000_000 })).toEqual(new Set());
  });

  it("answers every search as the whole search does: same contacts, same total, this project's only", async () => {
    const loaded = await loadCommonTrigrams(harness.pool, { minRows: seeded / 2, sampleRows: 1_000_000 });
    const searches = ["user12@", "USER12@", "user19999@seed.test", "r12", "seed.test", "user", "12%_", "%", "_", "xuser", "ser12@o"];
    for (const search of searches) {
      common = new Set();
      const whole = await harness.contacts.listContacts({ projectId, search, limit: 100 });
      common = loaded;
      const parted = await harness.contacts.listContacts({ projectId, search, limit: 100 });
      expect(
        parted.contacts.map((contact) => contact.email),
        search,
      ).toEqual(whole.contacts.map((contact) => contact.email));
      expect(parted.total, search).toBe(whole.total);
    }
    common = loaded;
    const found = await harness.contacts.listContacts({ projectId, search: "user12@" });
    expect(found.contacts.map((contact) => contact.email).sort()).toEqual(["user12@seed.test", "xuser12@other.test"]);
    expect(found.total).toBe(2n);
  });

  it("gives the statement the search's uncommon runs to match, and the search itself to test", async () => {
    const loaded = await loadCommonTrigrams(harness.pool, { minRows: seeded / 2, sampleRows: 1_000_000 });
    const filter = { search: "user1234@", searchParts: searchParts("user1234@", loaded), subscribed: undefined };
    // "er1" too is common here: user1000 to user19999.
    expect(filter.searchParts).toEqual(["r1234"]);
    const statement = contactPageSql(projectId, { filter, order: { sort: "createdAt", direction: "desc" }, after: undefined, limit: 21 });
    // Whether the trigram index or the project's key is the cheaper way in depends on the table's size (at 10 million
    // contacts it is the index: docs/benchmarks.md); either way the conditions are these.
    const { rows } = await harness.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN ${statement.text}`, statement.values);
    const plan = rows.map((row) => row["QUERY PLAN"]).join("\n");
    expect(plan).toContain("(email ~~ '%r1234%'::text)");
    expect(plan).toContain("(strpos(email, 'user1234@'::text) > 0)");
    expect(plan).not.toContain("%user1234@%");
  });
});
