import { lazy, Suspense, useEffect, useState } from "react";
import { api, orThrow } from "../api";
import { emptySource } from "../components/editor/blocks";
import type { EmailContent } from "../components/editor/email-composer";
import PreviewPanel, { type SampleData, sampleDataOf } from "../components/editor/preview-panel";
import { ActionButton, ActionForm, EmptyState, Field, formatDate, Headings, Loading, Page, Select } from "../components/ui";
import { useLoad } from "../hooks";
import { navigate, useRouteParam } from "../router";
import type { PageProps } from "../types";

// The block editor and MJML (hundreds of KB) load when a body is edited, not with the page.
const EmailComposer = lazy(() => import("../components/editor/email-composer"));

const templateTypes = ["TRANSACTIONAL", "MARKETING", "HEADLESS"] as const;

export default function Templates({ route, user }: PageProps) {
  return route[0] ? <TemplateEditor id={route[0] === "new" ? undefined : route[0]} me={user.email} /> : <TemplateList />;
}

/** The templates, searched and paged; both are in the link (#/templates?search=welcome). */
function TemplateList() {
  const [search, setSearch] = useRouteParam("search");
  const [pageParam, setPageParam] = useRouteParam("page", "1");
  const page = Math.max(1, Number.parseInt(pageParam, 10) || 1);
  const setPage = (value: number) => setPageParam(String(value));
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
      {list.data && list.data.data.length === 0 ? (
        <EmptyState>
          {search ? (
            <>
              No template matches “{search}”.{" "}
              <button type="button" className="secondary small" onClick={() => setSearch("")}>
                Clear the search
              </button>
            </>
          ) : (
            <>
              No template yet. <a href="#/templates/new">Create a template</a> for the emails your application sends with /v1/send, or to
              start campaigns from.
            </>
          )}
        </EmptyState>
      ) : null}
      <table hidden={list.data?.data.length === 0}>
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
  from: string;
  fromName: string;
  type: (typeof templateTypes)[number];
}

/** The editor: fields and the body's composer on the left, the server's preview on the right. */
function TemplateEditor(props: { id: string | undefined; me: string }) {
  const existing = useLoad(
    async () => (props.id ? orThrow(await api.GET("/templates/{id}", { params: { path: { id: props.id } } })).data : undefined),
    [props.id],
  );
  const [draft, setDraft] = useState<Draft>({ name: "", subject: "", from: "", fromName: "", type: "MARKETING" });
  // A new template starts with blocks; the composer compiles them on its first render.
  const [content, setContent] = useState<EmailContent>({ body: "", editor: props.id ? null : emptySource() });
  const [sample, setSample] = useState<SampleData>({ firstName: "Ada" });
  useEffect(() => {
    const template = existing.data;
    if (template) {
      setDraft({
        name: template.name,
        subject: template.subject,
        from: template.from,
        fromName: template.fromName ?? "",
        type: (template.type ?? "MARKETING") as Draft["type"],
      });
      setContent({ body: template.body, editor: template.editor });
    }
  }, [existing.data]);
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
            const body = { ...draft, fromName: draft.fromName || undefined, body: content.body, editor: content.editor };
            if (props.id) orThrow(await api.PATCH("/templates/{id}", { params: { path: { id: props.id } }, body }));
            else navigate(`/templates/${orThrow(await api.POST("/templates", { body })).data.id}`);
          }}
        >
          <Field label="Name" value={draft.name} onChange={set("name")} required />
          <Select label="Type" value={draft.type} options={templateTypes} onChange={set("type")} />
          <Field label="From (an address of a verified domain)" type="email" value={draft.from} onChange={set("from")} required />
          <Field label="From name" value={draft.fromName} onChange={set("fromName")} />
          <Field label="Subject" value={draft.subject} onChange={set("subject")} required />
          <Suspense fallback={<p>Loading the editor…</p>}>
            <EmailComposer value={content} onChange={setContent} title={draft.subject} />
          </Suspense>
        </ActionForm>
        <div>
          {props.id ? <TestSend templateId={props.id} sample={sample} me={props.me} /> : null}
          <PreviewPanel subject={draft.subject} body={content.body} sample={sample} onSample={setSample} />
        </div>
      </div>
    </Page>
  );
}

/** Sends the saved template to one address (yours unless changed) with the preview's sample data (POST /templates/:id/test). */
function TestSend(props: { templateId: string; sample: SampleData; me: string }) {
  const [email, setEmail] = useState(props.me);
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
            body: { email, data: sampleDataOf(props.sample) },
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
