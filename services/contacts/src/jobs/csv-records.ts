import { parse } from "csv-parse";

/** One data record of a CSV file, or a record the parser could not read (an unclosed quote). */
export type CsvRecord = { row: number; cells: string[] } | { row: number; malformed: true };

// The file is fed to the parser in slices of this size, so records come out as it goes.
const sliceBytes = 64 * 1024;

/**
 * The records of a CSV file in order, header first (row 0), then data records
 * numbered from 1. Uses csv-parse, so quoted fields, embedded newlines, CRLF and a
 * UTF-8 BOM are handled; cells are trimmed and blank lines skipped. A quote inside
 * an unquoted field is kept as a character. A record the parser gives up on (a
 * quote never closed) is yielded as malformed instead of failing the file.
 *
 * Records are collected through the parser's callbacks rather than its readable
 * side, because only the callbacks see skipped records in their place in the file.
 */
export async function* csvRecords(file: Uint8Array): AsyncGenerator<CsvRecord> {
  const ready: CsvRecord[] = [];
  let next = 0;
  const parser = parse({
    bom: true,
    trim: true,
    skip_empty_lines: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_records_with_error: true,
    on_record: (record: string[]) => {
      ready.push({ row: next++, cells: record });
      return null;
    },
    on_skip: () => {
      ready.push({ row: next++, malformed: true });
      return undefined;
    },
  });
  const ended = new Promise<void>((resolve, reject) => {
    parser.on("end", resolve).on("error", reject);
  });
  // Nothing comes out of the readable side (on_record keeps every record), but it must flow for "end" to fire.
  parser.resume();
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  for (let offset = 0; offset < bytes.length; offset += sliceBytes) {
    parser.write(bytes.subarray(offset, offset + sliceBytes));
    yield* ready.splice(0);
  }
  parser.end();
  await ended;
  yield* ready.splice(0);
}
