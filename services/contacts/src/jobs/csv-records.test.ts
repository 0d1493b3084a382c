import { describe, expect, it } from "vitest";
import { type CsvRecord, csvRecords } from "./csv-records.js";

async function recordsOf(text: string): Promise<CsvRecord[]> {
  const records: CsvRecord[] = [];
  for await (const record of csvRecords(new TextEncoder().encode(text))) records.push(record);
  return records;
}

describe("CSV records", () => {
  it("reads quoted fields, embedded newlines, a BOM and CRLF", async () => {
    expect(await recordsOf('\uFEFFemail,name\r\na@x.com,"Smith, Jo"\r\nb@x.com,"two\r\nlines ""quoted"""\r\n')).toEqual([
      { row: 0, cells: ["email", "name"] },
      { row: 1, cells: ["a@x.com", "Smith, Jo"] },
      { row: 2, cells: ["b@x.com", 'two\r\nlines "quoted"'] },
    ]);
  });

  it("trims cells, skips blank lines and keeps rows of another width for the caller to judge", async () => {
    expect(await recordsOf("email,name\n\n  a@x.com , Ann \nb@x.com\n")).toEqual([
      { row: 0, cells: ["email", "name"] },
      { row: 1, cells: ["a@x.com", "Ann"] },
      { row: 2, cells: ["b@x.com"] },
    ]);
  });

  it("keeps a stray quote inside a field as a character", async () => {
    expect((await recordsOf('email,size\na@x.com,5"10\n'))[1]).toEqual({ row: 1, cells: ["a@x.com", '5"10'] });
  });

  it("yields a record with an unclosed quote as malformed, in its place", async () => {
    expect(await recordsOf('email,name\na@x.com,Ann\nb@x.com,"never closed\nc@x.com,Cy\n')).toEqual([
      { row: 0, cells: ["email", "name"] },
      { row: 1, cells: ["a@x.com", "Ann"] },
      { row: 2, malformed: true },
    ]);
  });

  it("streams files larger than one slice", async () => {
    const rows = Array.from({ length: 5_000 }, (_, index) => `user${index}@x.com,"line one\nline two ${index}"`);
    const records = await recordsOf(`email,note\n${rows.join("\n")}\n`);
    expect(records).toHaveLength(5_001);
    expect(records.at(-1)).toEqual({ row: 5_000, cells: ["user4999@x.com", "line one\nline two 4999"] });
  });
});
