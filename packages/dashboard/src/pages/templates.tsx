import { useEffect, useState } from "react";
import { api, messageOf, orThrow } from "../api";
import { ActionButton, ActionForm, ErrorNote, Field, formatDate, Headings, Loading, Page, Select } from "../components/ui";
import { useLoad } from "../hooks";
import { navigate } from "../router";
import type { PageProps } from "../types";
import { parseObject } from "./contacts";

const templateTypes = ["TRANSACTIONAL", "MARKETING", "HEADLESS"] as const;

export default function Templates({ route }: PageProps) {
  return route[0] ? <TemplateEditor id={route[0] === "new" ? undefined : route[0]} /> : <TemplateList />;
}

function TemplateList() {
  const [search, setSearch] = useState("");
  const [page, setPage] = useState(1);
  const list = useLoad(
    async () =>
      orThrow(await api.GET("/templates", { params: { query: { page: String(page), pageSize: "20", ...(search ? { search } : {}) } } }))
        .data,
    [search, page],
  );
  return (
    <Page
      title="Templates"
      actions={
        <button type="button" onClick={() => navigate("/templates/new")}>
          New template
        </button>
      }
    >
      <Field
        label="Search"
        value={search}
        onChange={(value) => {
          setSearch(value);
          setPage(1);
        }}
      />
      <Loading loading={list.loading && !list.data} error={list.error} />
      <table>
        <Headings names={["Name", "Subject", "Type", "Updated"]} />
        <tbody>
          {list.data?.data.map((template) => (
            <tr key={template.id}>
              <td>
                <a href={`#/templates/${template.id}`}>{template.name}</a>
              </td>
              <td>{template.subject}</td>
              <td>{template.type}</td>
              <td>{formatDate(template.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager page={page} totalPages={list.data?.totalPages ?? 1} onPage={setPage} />
    </Page>
  );
}

export function Pager(props: { page: number; totalPages: number; onPage: (page: number) => void }) {
  return (
    <p className="pager">
      Page {props.page} of {Math.max(props.totalPages, 1)}{" "}
      <button type="button" className="secondary" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous
      </button>{" "}
      <button type="button" className="secondary" disabled={props.page >= props.totalPages} onClick={() => props.onPage(props.page + 1)}>
        Next
      </button>
    </p>
  );
}

interface Draft {
  name: string;
  subject: string;
  body: string;
  from: string;
  fromName: string;
  type: (typeof templateTypes)[number];
}

/** The editor: fields on the left, a live preview on the right rendered by POST /templates/preview from sample data. */
function TemplateEditor(props: { id: string | undefined }) {
  const existing = useLoad(
    async () => (props.id ? orThrow(await api.GET("/templates/{id}", { params: { path: { id: props.id } } })).data : undefined),
    [props.id],
  );
  const [draft, setDraft] = useState<Draft>({
    name: "",
    subject: "",
    body: "<p>Hello {{ data.firstName | default: 'there' }}</p>",
    from: "",
    fromName: "",
    type: "TRANSACTIONAL",
  });
  const [sample, setSample] = useState('{"firstName": "Ada"}');
  useEffect(() => {
    const template = existing.data;
    if (template) {
      setDraft({
        name: template.name,
        subject: template.subject,
        body: template.body,
        from: template.from,
        fromName: template.fromName ?? "",
        type: (template.type ?? "TRANSACTIONAL") as Draft["type"],
      });
    }
  }, [existing.data]);
  const preview = usePreview(draft.subject, draft.body, sample);
  const set = (key: keyof Draft) => (value: string) => setDraft({ ...draft, [key]: value });

  if (props.id && !existing.data) return <Loading loading={existing.loading} error={existing.error} />;
  return (
    <Page
      title={props.id ? `Template: ${draft.name}` : "New template"}
      actions={
        props.id ? (
          <ActionButton
            label="Delete"
            kind="danger"
            action={async () => {
              orThrow(await api.DELETE("/templates/{id}", { params: { path: { id: props.id ?? "" } } }));
              navigate("/templates");
            }}
          />
        ) : null
      }
    >
      <div className="split">
        <ActionForm
          submit="Save the template"
          action={async () => {
            const body = { ...draft, fromName: draft.fromName || undefined };
            if (props.id) orThrow(await api.PATCH("/templates/{id}", { params: { path: { id: props.id } }, body }));
            else navigate(`/templates/${orThrow(await api.POST("/templates", { body })).data.id}`);
          }}
        >
          <Field label="Name" value={draft.name} onChange={set("name")} required />
          <Select label="Type" value={draft.type} options={templateTypes} onChange={set("type")} />
          <Field label="From (an address of a verified domain)" type="email" value={draft.from} onChange={set("from")} required />
          <Field label="From name" value={draft.fromName} onChange={set("fromName")} />
          <Field label="Subject" value={draft.subject} onChange={set("subject")} required />
          <Field label="Body (HTML with Liquid)" value={draft.body} onChange={set("body")} multiline rows={14} />
          <Field label="Sample data for the preview (JSON)" value={sample} onChange={setSample} multiline rows={3} />
        </ActionForm>
        <section className="preview" aria-labelledby="preview-title" aria-live="polite">
          {props.id ? <TestSend templateId={props.id} sample={sample} /> : null}
          <h2 id="preview-title">Preview</h2>
          <ErrorNote error={preview.error} />
          {preview.rendered ? (
            <>
              <p>
                <strong>Subject:</strong> {preview.rendered.subject}
              </p>
              <iframe title="Rendered body" sandbox="" srcDoc={preview.rendered.html} />
            </>
          ) : null}
        </section>
      </div>
    </Page>
  );
}

/** Sends the saved template to one address with the sample data (POST /templates/:id/test). */
function TestSend(props: { templateId: string; sample: string }) {
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState(false);
  return (
    <ActionForm
      className="form inline"
      submit="Send a test"
      action={async () => {
        setSent(false);
        orThrow(
          await api.POST("/templates/{id}/test", {
            params: { path: { id: props.templateId } },
            body: { email, data: parseObject(props.sample) },
          }),
        );
        setSent(true);
      }}
    >
      <Field label="Test address" type="email" value={email} onChange={setEmail} required />
      {sent ? <p role="status">Sent: the saved version, with the sample data.</p> : null}
    </ActionForm>
  );
}

/** Renders the draft 400 ms after the last keystroke; a Liquid error shows with its line. */
function usePreview(subject: string, body: string, sample: string) {
  const [state, setState] = useState<{ rendered?: { subject: string; html: string }; error?: string }>({});
  useEffect(() => {
    const timer = setTimeout(async () => {
      try {
        const data = parseObject(sample);
        const answer = orThrow(await api.POST("/templates/preview", { body: { subject, body, data } }));
        setState({ rendered: answer.data });
      } catch (error) {
        setState({ error: messageOf(error) });
      }
    }, 400);
    return () => clearTimeout(timer);
  }, [subject, body, sample]);
  return state;
}
