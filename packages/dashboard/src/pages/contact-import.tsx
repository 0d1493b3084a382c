import { useEffect, useState } from "react";
import { api, orThrow } from "../api";
import { useToast } from "../components/toasts";
import { ActionForm, ErrorNote, Headings } from "../components/ui";
import { useLoad, usePoll } from "../hooks";

/** What a CSV column becomes: the email, an existing field, a new field (`new`, named beside it), or nothing. */
type Choice = "email" | "skip" | "new" | `field:${string}`;

interface Sheet {
  name: string;
  columns: string[];
  rows: string[][];
}

const maxBytes = 5 * 1024 * 1024;
const squashed = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, "");
const emailHeadings = new Set(["email", "emailaddress", "mail"]);
// SPEC.md's import rules drop these columns: preselecting "skip" says so before the upload.
const droppedHeadings = new Set(["id", "subscribed", "createdat", "updatedat"]);

/** Papa Parse, loaded when a file is picked. It is a UMD module: the bundle hands its exports as the default. */
async function loadPapaParse() {
  const loaded = await import("papaparse");
  return (loaded as unknown as { default?: typeof loaded }).default ?? loaded;
}

/** "First name" → "firstName": the data key a column becomes when nothing better is chosen; one word ("firstName") stays. */
function fieldNameOf(heading: string): string {
  const words = heading
    .trim()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  if (words.length === 1) return words[0] as string;
  return words.map((word, index) => (index === 0 ? word.toLowerCase() : word[0]?.toUpperCase() + word.slice(1).toLowerCase())).join("");
}

/** The project's custom fields, by their names in `data`. */
async function customFields(): Promise<string[]> {
  return orThrow(await api.GET("/contacts/fields"))
    .data.fields.filter((field) => field.isCustom)
    .map((field) => field.field.replace(/^data\./, ""));
}

/** The first guess for each column: an email-like heading is the email, a known field keeps its name, the rest are new fields. */
function guess(columns: string[], fields: string[]): Choice[] {
  let emailTaken = false;
  return columns.map((column): Choice => {
    const key = squashed(column);
    if (!emailTaken && emailHeadings.has(key)) {
      emailTaken = true;
      return "email";
    }
    if (droppedHeadings.has(key)) return "skip";
    const known = fields.find((field) => squashed(field) === key);
    return known ? `field:${known}` : "new";
  });
}

/** The mapping's header names (null for a skipped column), or what is wrong with it. */
function headerOf(choices: Choice[], newNames: string[]): { header: (string | null)[] } | { problem: string } {
  const header = choices.map((choice, index) => {
    if (choice === "skip") return null;
    if (choice === "email") return "email";
    if (choice === "new") return (newNames[index] ?? "").trim().replace(/^data\./, "");
    return choice.slice("field:".length);
  });
  const kept = header.filter((name): name is string => name !== null);
  if (kept.filter((name) => name === "email").length !== 1) return { problem: "Choose exactly one column as the email address." };
  if (kept.includes("")) return { problem: "Name every new field." };
  const twice = kept.find((name, index) => kept.indexOf(name) !== index);
  if (twice) return { problem: `Two columns go to the field ${twice}: choose one, or skip the other.` };
  return { header };
}

/**
 * CSV import: the file's columns are read here and mapped (the email, a field, a new field, or skipped) before the upload;
 * the API takes a file whose header names the fields, so the mapping rewrites the header and drops the skipped columns
 * (docs/dashboard.md "Contacts"). Then the job is polled until it finishes, with a progress bar.
 */
export function ContactImport(props: { onDone: () => void }) {
  const [sheet, setSheet] = useState<Sheet>();
  const [choices, setChoices] = useState<Choice[]>([]);
  const [newNames, setNewNames] = useState<string[]>([]);
  const [readError, setReadError] = useState<string>();
  const [jobId, setJobId] = useState<string>();
  const [picker, setPicker] = useState(0);
  const toast = useToast();
  const fields = useLoad(customFields, []);
  const job = useLoad(
    async () => (jobId ? orThrow(await api.GET("/contacts/import/{jobId}", { params: { path: { jobId } } })).data : undefined),
    [jobId],
  );
  const status = job.data?.status;
  const running = status !== undefined && !["completed", "failed"].includes(status);
  usePoll(running, 1000, job.reload);
  useEffect(() => {
    if (status === "completed") toast("success", "The import finished");
    if (status === "failed") toast("failure", "The import failed");
  }, [status, toast]);
  const processed = (job.data?.imported ?? 0) + (job.data?.updated ?? 0) + (job.data?.skipped ?? 0);
  const mapping = sheet ? headerOf(choices, newNames) : undefined;

  async function read(file: File) {
    setReadError(undefined);
    setSheet(undefined);
    if (file.size > maxBytes) {
      setReadError("The file is larger than 5 MB: split it in smaller files.");
      return;
    }
    const Papa = await loadPapaParse();
    const parsed = await new Promise<string[][]>((resolve, reject) =>
      Papa.parse<string[]>(file, { skipEmptyLines: "greedy", complete: (result) => resolve(result.data), error: reject }),
    );
    const [columns, ...rows] = parsed;
    if (!columns || columns.length === 0) {
      setReadError("The file has no header row: its first line names the columns.");
      return;
    }
    // A file picked before the fields arrived is guessed against them all the same.
    const known = fields.data ?? (await customFields());
    setSheet({ name: file.name, columns, rows });
    setChoices(guess(columns, known));
    setNewNames(columns.map(fieldNameOf));
  }

  return (
    <section aria-labelledby="import-title">
      <h2 id="import-title">Import a CSV</h2>
      <label className="field">
        CSV file (a header row, with an email column; at most 5 MB)
        <input
          key={picker}
          type="file"
          accept=".csv,text/csv"
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) read(file).catch((error: unknown) => setReadError(`The file could not be read: ${String(error)}`));
          }}
        />
      </label>
      <ErrorNote error={readError} />
      {sheet ? (
        <ActionForm
          className="form mapping-form"
          submit={`Import ${sheet.rows.length === 1 ? "1 row" : `${sheet.rows.length} rows`}`}
          done="The import started"
          action={async () => {
            if (!mapping || "problem" in mapping) throw new Error(mapping?.problem ?? "Pick a file first");
            const Papa = await loadPapaParse();
            const kept = mapping.header.flatMap((name, index) => (name === null ? [] : [index]));
            const csv = Papa.unparse({
              fields: kept.map((index) => mapping.header[index] as string),
              data: sheet.rows.map((row) => kept.map((index) => row[index] ?? "")),
            });
            const form = new FormData();
            form.append("file", new File([csv], sheet.name, { type: "text/csv" }));
            const answer = orThrow(
              await api.POST("/contacts/import", { body: form as never, bodySerializer: (body: unknown) => body as FormData }),
            );
            setJobId((answer.data as { jobId: string }).jobId);
            setSheet(undefined);
            setPicker((value) => value + 1);
          }}
        >
          <table className="mapping">
            <caption>Columns of {sheet.name}: what each one becomes</caption>
            <Headings names={["Column", "First value", "Import as", "New field's name"]} />
            <tbody>
              {sheet.columns.map((column, index) => (
                <ColumnRow
                  // Columns keep their place while the file is mapped.
                  // biome-ignore lint/suspicious/noArrayIndexKey: two columns may share a heading.
                  key={index}
                  column={column}
                  example={sheet.rows[0]?.[index] ?? ""}
                  choice={choices[index] ?? "skip"}
                  newName={newNames[index] ?? ""}
                  fields={fields.data ?? []}
                  onChoice={(choice) => setChoices(choices.map((each, at) => (at === index ? choice : each)))}
                  onNewName={(name) => setNewNames(newNames.map((each, at) => (at === index ? name : each)))}
                />
              ))}
            </tbody>
          </table>
          {mapping && "problem" in mapping ? <p className="hint">{mapping.problem}</p> : null}
        </ActionForm>
      ) : null}
      <ErrorNote error={job.error} />
      {job.data ? (
        <div>
          <progress max={job.data.totalRows || 1} value={processed} aria-label="Import progress" />
          <p role="status">
            {job.data.status}: {job.data.imported} imported, {job.data.updated} updated, {job.data.skipped} skipped
            {job.data.status === "completed" ? (
              <>
                {" "}
                <button type="button" className="secondary small" onClick={props.onDone}>
                  Show them
                </button>
              </>
            ) : null}
          </p>
          {job.data.errors.length > 0 ? (
            <ul className="errors">
              {job.data.errors.slice(0, 20).map((row, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows have no id of their own.
                <li key={index}>{JSON.stringify(row)}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

function ColumnRow(props: {
  column: string;
  example: string;
  choice: Choice;
  newName: string;
  fields: string[];
  onChoice: (choice: Choice) => void;
  onNewName: (name: string) => void;
}) {
  return (
    <tr>
      <th scope="row">{props.column || "(no heading)"}</th>
      <td>{props.example}</td>
      <td>
        <select
          aria-label={`Import “${props.column}” as`}
          value={props.choice}
          onChange={(event) => props.onChoice(event.target.value as Choice)}
        >
          <option value="email">The email address</option>
          {props.fields.map((field) => (
            <option key={field} value={`field:${field}`}>
              The field {field}
            </option>
          ))}
          <option value="new">A new field</option>
          <option value="skip">Skip this column</option>
        </select>
      </td>
      <td>
        {props.choice === "new" ? (
          <input
            aria-label={`New field's name for “${props.column}”`}
            value={props.newName}
            required
            onChange={(event) => props.onNewName(event.target.value)}
          />
        ) : null}
      </td>
    </tr>
  );
}
