import { useEffect, useId, useState } from "react";
import { api, messageOf, orThrow } from "../../api";
import { useLoad } from "../../hooks";
import { ErrorNote } from "../ui";

export type SampleData = Record<string, string>;

/** The sample data's fields as the data of a preview or a test send: numbers and booleans as such, as the CSV import types them. */
export function sampleDataOf(sample: SampleData): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(sample)) {
    if (raw === "") continue;
    data[key] = raw === "true" ? true : raw === "false" ? false : /^-?(0|[1-9]\d*)(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return data;
}

const widths = { desktop: 640, mobile: 375 } as const;

/**
 * The server's rendering (POST /templates/preview) of the subject and body, for a contact of
 * the project or for sample data typed field by field, at a desktop or a phone's width.
 */
export default function PreviewPanel(props: { subject: string; body: string; sample: SampleData; onSample: (sample: SampleData) => void }) {
  const { sample, onSample } = props;
  const [source, setSource] = useState<"sample" | "contact">("sample");
  const [search, setSearch] = useState("");
  const [contactId, setContactId] = useState("");
  const [width, setWidth] = useState<keyof typeof widths>("desktop");
  const fields = useLoad(async () => orThrow(await api.GET("/contacts/fields")).data.fields, []);
  const contacts = useLoad(
    async () =>
      source === "contact"
        ? orThrow(await api.GET("/contacts", { params: { query: { limit: "20", ...(search ? { search } : {}) } } })).data.data
        : [],
    [source, search],
  );
  const chosenContact = contactId || contacts.data?.[0]?.id || "";
  const [state, setState] = useState<{ rendered?: { subject: string; html: string }; error?: string }>({});
  const sampleJson = JSON.stringify(sample);
  // biome-ignore lint/correctness/useExhaustiveDependencies: sampleJson stands for sample.
  useEffect(() => {
    if (source === "contact" && !chosenContact) return;
    const timer = setTimeout(async () => {
      try {
        const body =
          source === "contact"
            ? { subject: props.subject, body: props.body, contactId: chosenContact }
            : { subject: props.subject, body: props.body, data: sampleDataOf(sample) };
        setState({ rendered: orThrow(await api.POST("/templates/preview", { body })).data });
      } catch (error) {
        setState({ error: messageOf(error) });
      }
    }, 400);
    return () => clearTimeout(timer);
  }, [props.subject, props.body, sampleJson, source, chosenContact]);

  const customFields = (fields.data ?? []).filter((field) => field.isCustom).map((field) => field.field.replace(/^data\./, ""));
  const sampleKeys = [...new Set([...customFields, ...Object.keys(sample)])];
  const [newKey, setNewKey] = useState("");
  const ids = { source: useId(), contact: useId(), search: useId(), newKey: useId() };

  return (
    <section className="preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <fieldset className="mode">
        <legend>Preview for</legend>
        <label>
          <input type="radio" name={ids.source} checked={source === "sample"} onChange={() => setSource("sample")} /> Sample data
        </label>
        <label>
          <input type="radio" name={ids.source} checked={source === "contact"} onChange={() => setSource("contact")} /> A contact
        </label>
      </fieldset>
      {source === "contact" ? (
        <div className="sample">
          <div className="field">
            <label htmlFor={ids.search}>Find a contact</label>
            <input id={ids.search} type="search" value={search} onChange={(event) => setSearch(event.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={ids.contact}>Contact</label>
            <select id={ids.contact} value={chosenContact} onChange={(event) => setContactId(event.target.value)}>
              {(contacts.data ?? []).map((contact) => (
                <option key={contact.id} value={contact.id}>
                  {contact.email}
                </option>
              ))}
            </select>
          </div>
          {contacts.data && contacts.data.length === 0 ? <p>No contact matches: import or add contacts first.</p> : null}
        </div>
      ) : (
        <fieldset className="sample">
          <legend>Sample data</legend>
          {sampleKeys.map((key) => (
            <SampleField key={key} name={key} value={sample[key] ?? ""} onChange={(value) => onSample({ ...sample, [key]: value })} />
          ))}
          <div className="inline-add">
            <label htmlFor={ids.newKey}>Another field</label>
            <input id={ids.newKey} value={newKey} onChange={(event) => setNewKey(event.target.value.trim())} />
            <button
              type="button"
              className="secondary small"
              disabled={!newKey || newKey in sample}
              onClick={() => {
                onSample({ ...sample, [newKey]: "" });
                setNewKey("");
              }}
            >
              Add the field
            </button>
          </div>
        </fieldset>
      )}
      <fieldset className="mode">
        <legend>Width</legend>
        {(Object.keys(widths) as (keyof typeof widths)[]).map((each) => (
          <label key={each}>
            <input type="radio" name={`${ids.source}-width`} checked={width === each} onChange={() => setWidth(each)} />{" "}
            {each === "desktop" ? "Desktop" : "Mobile"} ({widths[each]} px)
          </label>
        ))}
      </fieldset>
      <div aria-live="polite">
        <ErrorNote error={state.error} />
        {state.rendered ? (
          <>
            <p>
              <strong>Subject:</strong> <span data-testid="preview-subject">{state.rendered.subject}</span>
            </p>
            <iframe
              title={`Rendered body at ${widths[width]} px`}
              sandbox=""
              srcDoc={state.rendered.html}
              style={{ width: `${widths[width]}px`, maxWidth: "100%" }}
              className="preview-frame"
            />
          </>
        ) : null}
      </div>
    </section>
  );
}

function SampleField(props: { name: string; value: string; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.name}</label>
      <input id={id} value={props.value} onChange={(event) => props.onChange(event.target.value)} />
    </div>
  );
}
