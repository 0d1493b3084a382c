import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ContactsHarness, eventually, newProjectId, startContacts } from "../test-support/contacts-harness.js";

describe("durable jobs", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    // No worker of its own: the test starts and "crashes" workers itself.
    harness = await startContacts(inject("herald"), { worker: false });
  });

  afterAll(() => harness?.stop());

  const progressOf = (id: string) =>
    harness.db.importJob.findUniqueOrThrow({
      where: { id },
      select: {
        status: true,
        rowsDone: true,
        totalRows: true,
        imported: true,
        updated: true,
        skipped: true,
        attempts: true,
        leaseOwner: true,
      },
    });

  it("resumes an import after its worker died, from the last committed batch, counting nothing twice", async () => {
    const projectId = newProjectId();
    const rows = Array.from({ length: 20_000 }, (_, index) => `crash${index}@example.com,${index}`);
    const { job } = await harness.jobs.startImport({
      projectId,
      filename: "big.csv",
      csv: new TextEncoder().encode(`email,n\n${rows.join("\n")}\n`),
    });
    const id = job?.jobId ?? "";

    const first = harness.startWorker({ name: "worker-a", importBatchSize: 250, leaseMs: 60_000 });
    await eventually(async () => (await progressOf(id)).rowsDone >= 1_000, 30_000);
    // Worker A "dies": its lease passes to nobody it knows, so its batch in flight rolls back and it writes no more.
    await harness.db
      .$executeRaw`UPDATE import_jobs SET lease_owner = 'gone', lease_expires_at = now() + interval '1 hour' WHERE id = ${id}::uuid`;
    await first.stop();
    const atCrash = await progressOf(id);
    expect(atCrash.status).toBe("processing");
    expect(atCrash.rowsDone).toBeGreaterThanOrEqual(1_000);
    expect(atCrash.rowsDone).toBeLessThan(20_000);
    expect(atCrash.rowsDone % 250).toBe(0);
    expect(atCrash.imported).toBe(atCrash.rowsDone);
    expect(await harness.db.contact.count({ where: { projectId } })).toBe(atCrash.rowsDone);

    // The lease runs out; another worker takes the job over and finishes it.
    await harness.db.$executeRaw`UPDATE import_jobs SET lease_expires_at = now() - interval '1 second' WHERE id = ${id}::uuid`;
    harness.startWorker({ name: "worker-b" });
    const done = await eventually(async () => {
      const progress = await progressOf(id);
      return progress.status === "completed" ? progress : undefined;
    }, 30_000);
    expect(done).toMatchObject({
      rowsDone: 20_000,
      totalRows: 20_000,
      imported: 20_000,
      updated: 0,
      skipped: 0,
      attempts: 2,
      leaseOwner: null,
    });
    expect(await harness.db.contact.count({ where: { projectId } })).toBe(20_000);
  }, 60_000);

  it("fails a job whose workers keep dying instead of retrying it forever", async () => {
    const projectId = newProjectId();
    const { job } = await harness.jobs.startImport({
      projectId,
      filename: "x.csv",
      csv: new TextEncoder().encode("email\na@example.com\n"),
    });
    const id = job?.jobId ?? "";
    await harness.db.$executeRaw`
      UPDATE import_jobs SET status = 'processing', attempts = 5, lease_owner = 'gone', lease_expires_at = now() - interval '1 second'
      WHERE id = ${id}::uuid`;
    const worker = harness.startWorker({ name: "worker-c" });
    const failed = await eventually(async () => {
      const { job: current } = await harness.jobs.getImport({ projectId, jobId: id });
      return current?.status === "failed" ? current : undefined;
    });
    expect(failed.failureReason).toContain("interrupted");
    await worker.stop();
  });
});
