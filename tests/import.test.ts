import { waitUntil } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { Contact } from "./support/resources.js";

const { stack } = inject("herald");
const call = restClient(stack.gatewayUrl);

type ImportJob = {
  jobId: string;
  status: string;
  totalRows: number;
  imported: number;
  updated: number;
  skipped: number;
  errors: Array<{ row: number; email: string; reason: string }>;
  failureReason: string | null;
};

async function upload(key: string, content: string | Uint8Array, filename = "contacts.csv", type = "text/csv") {
  const form = new FormData();
  form.append("file", new Blob([content], { type }), filename);
  const response = await fetch(`${stack.gatewayUrl}/contacts/import`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return {
    status: response.status,
    body: (await response.json()) as { jobId: string; status: string; error?: { code: string; statusCode: number } } & Record<
      string,
      unknown
    >,
  };
}

async function finished(key: string, jobId: string, timeoutMs = 60_000): Promise<ImportJob> {
  let job: ImportJob | undefined;
  await waitUntil(
    async () => {
      job = (await call<ImportJob>("GET", `/contacts/import/${jobId}`, { key })).body;
      return job.status === "completed" || job.status === "failed";
    },
    { timeoutMs },
  );
  return job as ImportJob;
}

const contactByEmail = async (key: string, email: string) => {
  const found = await call<{ found: Array<{ id: string }> }>("POST", "/contacts/lookup", { key, body: { emails: [email] } });
  const id = found.body.found[0]?.id;
  return id ? (await call<Contact>("GET", `/contacts/${id}`, { key })).body : undefined;
};

describe("CSV import", () => {
  let project: CreatedProject;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "importer")).cookie, "Import");
  });

  it("imports quoted fields, embedded newlines, a BOM and CRLF, types values, and reports bad rows", async () => {
    await call("POST", "/contacts", {
      key: project.secretKey,
      body: { email: "existing@x.test", subscribed: false, data: { keep: "me" } },
    });
    const csv = [
      "\uFEFFEmail,Name,Vip,Score,Zip,Phone,Since,Bio,id,subscribed",
      'one@x.test,"Doe, Jane",yes,42,02134,+4412345,2024-05-01,"line one\r\nline two",abc,false',
      "two@x.test,Bob,FALSE,3.5,123,1e5,2024-05-01T10:00:00Z,,,",
      "not-an-email,Nobody,no,1,1,1,1,1,1,1",
      "existing@x.test,Old Friend,true,7,,,,,,",
      ",Missing,true,1,,,,,,",
    ].join("\r\n");
    const started = await upload(project.secretKey, csv);
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ jobId: expect.any(String), status: "queued" });

    const job = await finished(project.secretKey, started.body.jobId);
    expect(job).toMatchObject({ status: "completed", totalRows: 5, imported: 2, updated: 1, skipped: 2 });
    expect(job.errors).toEqual(
      expect.arrayContaining([
        { row: 3, email: "not-an-email", reason: "invalid_email" },
        { row: 5, email: "", reason: "invalid_email" },
      ]),
    );

    const one = await contactByEmail(project.secretKey, "one@x.test");
    expect(one?.subscribed).toBe(true);
    expect(one?.data).toEqual({
      Name: "Doe, Jane",
      Vip: true,
      Score: 42,
      Zip: "02134",
      Phone: "+4412345",
      Since: "2024-05-01",
      Bio: "line one\r\nline two",
    });
    const two = await contactByEmail(project.secretKey, "two@x.test");
    expect(two?.data).toMatchObject({ Vip: false, Score: 3.5, Zip: 123, Phone: "1e5" });
    // An existing contact is merged, not replaced, and keeps its subscription.
    const existing = await contactByEmail(project.secretKey, "existing@x.test");
    expect(existing).toMatchObject({ subscribed: false, data: { keep: "me", Name: "Old Friend", Vip: true, Score: 7 } });
  });

  it("fails a file without an email column with a clear reason", async () => {
    const started = await upload(project.secretKey, "name,plan\nAda,pro\n");
    const job = await finished(project.secretKey, started.body.jobId);
    expect(job.status).toBe("failed");
    expect(job.failureReason).toMatch(/email/i);
  });

  it("refuses a file over 5 MB with 413 and a file that is not CSV with 400", async () => {
    const big = `email,padding\n${"x@y.test,".padEnd(100, "z")}\n`.repeat(Math.ceil((6 * 1024 * 1024) / 100));
    const tooBig = await upload(project.secretKey, big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ success: false, error: { statusCode: 413 } });
    // One byte over is refused too, never imported cut short.
    const header = "email,note\n";
    const row = "edge@y.test,";
    const justOver = header + row + "z".repeat(5 * 1024 * 1024 + 1 - header.length - row.length);
    const over = await upload(project.secretKey, justOver);
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ success: false, error: { statusCode: 413 } });
    const png = await upload(
      project.secretKey,
      new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0]),
      "picture.png",
      "image/png",
    );
    expect(png.status).toBe(400);
    expect(png.body.error?.code).toBe("INVALID_FILE");
  });

  it("imports 50,000 rows while the API stays responsive", async () => {
    const large = await createProject(call, (await signUp(call, "bulkimport")).cookie, "Large");
    const rows = Array.from({ length: 50_000 }, (_, index) => `user${index}@big.test,${index},${index % 2 === 0 ? "yes" : "no"}`);
    const started = await upload(large.secretKey, `email,n,flag\n${rows.join("\n")}\n`);
    expect(started.status).toBe(202);
    const probe = await call("POST", "/contacts", { key: large.secretKey, body: { email: "probe@big.test" } });
    expect(probe.status).toBe(201);
    const job = await finished(large.secretKey, started.body.jobId, 180_000);
    expect(job).toMatchObject({ status: "completed", totalRows: 50_000, imported: 50_000, skipped: 0 });
    const page = await call<{ total: number }>("GET", "/contacts?limit=1", { key: large.secretKey });
    expect(page.body.total).toBe(50_001);
    expect((await contactByEmail(large.secretKey, "user49999@big.test"))?.data).toEqual({ n: 49999, flag: false });
  }, 240_000);
});

describe("bulk jobs", () => {
  it("unsubscribes, subscribes and deletes up to 1,000 contacts in the background", async () => {
    const project = await createProject(call, (await signUp(call, "bulk")).cookie, "Bulk");
    const key = project.secretKey;
    const ids: string[] = [];
    for (const email of ["b1@x.test", "b2@x.test", "b3@x.test"])
      ids.push((await call<Contact>("POST", "/contacts", { key, body: { email } })).body.id);
    await call("PATCH", `/contacts/${ids[2]}`, { key, body: { subscribed: false } });

    type Bulk = {
      jobId: string;
      status: string;
      total: number;
      processed: number;
      succeeded: number;
      unchanged: number;
      notFound: number;
      progress: number;
    };
    const run = async (action: string, body: unknown) => {
      const started = await call<{ jobId: string; status: string }>("POST", `/contacts/bulk-${action}`, { key, body });
      expect(started.status).toBe(202);
      let job: Bulk | undefined;
      await waitUntil(async () => {
        job = (await call<Bulk>("GET", `/contacts/bulk/${started.body.jobId}`, { key })).body;
        return job.status === "completed";
      });
      return job as Bulk;
    };

    const unsubscribed = await run("unsubscribe", { ids: [...ids, "00000000-0000-0000-0000-000000000000"] });
    expect(unsubscribed).toMatchObject({ total: 4, processed: 4, succeeded: 2, unchanged: 1, notFound: 1, progress: 1 });
    const events = await call<{ data: Array<{ name: string }> }>("GET", `/events/contact/${ids[0]}`, { key });
    expect(events.body.data.map((event) => event.name)).toContain("contact.unsubscribed");

    expect(await run("subscribe", { ids })).toMatchObject({ succeeded: 3 });
    expect(await run("delete", { ids: ids.slice(0, 2) })).toMatchObject({ succeeded: 2 });
    expect((await call("GET", `/contacts/${ids[0]}`, { key })).status).toBe(404);

    const tooMany = await call<{ error: { code: string } }>("POST", "/contacts/bulk-delete", {
      key,
      body: { ids: Array.from({ length: 1001 }, (_, i) => `id-${i}`) },
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.code).toBe("VALIDATION_ERROR");
  });
});
