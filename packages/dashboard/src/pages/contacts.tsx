import { useState } from "react";
import { api, orThrow } from "../api";
import { ActionButton, ActionForm, EmptyState, Field, formatDate, Loading, Page, Select } from "../components/ui";
import { useLoad } from "../hooks";
import { navigate, useRouteChoice, useRouteParam } from "../router";
import type { PageProps } from "../types";
import { ContactImport } from "./contact-import";

const subscriptionFilters = ["all", "subscribed", "unsubscribed"] as const;

export default function Contacts({ route }: PageProps) {
  return route[0] ? <ContactPage id={route[0]} /> : <ContactList />;
}

/** Searchable, cursor-paged contacts, with creation, CSV import and bulk actions; the filters are in the link. */
function ContactList() {
  const [search, setSearch] = useRouteParam("search");
  const [filter, setFilter] = useRouteChoice("subscription", subscriptionFilters);
  const [cursors, setCursors] = useState<string[]>([]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const cursor = cursors.at(-1);
  const list = useLoad(
    async () =>
      orThrow(
        await api.GET("/contacts", {
          params: {
            query: {
              limit: "20",
              ...(cursor ? { cursor } : {}),
              ...(search ? { search } : {}),
              ...(filter === "all" ? {} : { subscribed: filter === "subscribed" ? "true" : "false" }),
            },
          },
        }),
      ).data,
    [search, filter, cursor],
  );
  const ids = [...selected];
  const bulk = async (path: "/contacts/bulk-subscribe" | "/contacts/bulk-unsubscribe" | "/contacts/bulk-delete") => {
    orThrow(await api.POST(path, { body: { ids } }));
    setSelected(new Set());
    setTimeout(list.reload, 500);
  };
  return (
    <Page title="Contacts" actions={<NewContact onCreated={list.reload} />}>
      <div className="toolbar">
        <Field
          label="Search by email"
          value={search}
          onChange={(value) => {
            setSearch(value);
            setCursors([]);
          }}
        />
        <Select
          label="Subscription"
          value={filter}
          options={subscriptionFilters}
          onChange={(value) => {
            setFilter(value);
            setCursors([]);
          }}
        />
      </div>
      {ids.length > 0 ? (
        <fieldset className="toolbar" aria-label="Bulk actions">
          <span>{ids.length} selected</span>
          <ActionButton label="Subscribe" action={() => bulk("/contacts/bulk-subscribe")} />
          <ActionButton label="Unsubscribe" kind="secondary" action={() => bulk("/contacts/bulk-unsubscribe")} />
          <ActionButton label="Delete" kind="danger" action={() => bulk("/contacts/bulk-delete")} />
        </fieldset>
      ) : null}
      <Loading loading={list.loading && !list.data} error={list.error} />
      {list.data && list.data.data.length === 0 ? (
        search || filter !== "all" ? (
          <EmptyState>
            No contact matches these filters.{" "}
            <button
              type="button"
              className="secondary small"
              onClick={() => {
                setSearch("");
                setFilter("all");
              }}
            >
              Clear the filters
            </button>
          </EmptyState>
        ) : (
          <EmptyState>
            No contact yet: add one with “New contact”, import a CSV below, or send events with POST /v1/track from your application.
          </EmptyState>
        )
      ) : null}
      <table hidden={list.data?.data.length === 0}>
        <caption className="sr-only">Contacts</caption>
        <thead>
          <tr>
            <th scope="col">
              <span className="sr-only">Select</span>
            </th>
            <th scope="col">Email</th>
            <th scope="col">Subscribed</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.data.map((contact) => (
            <tr key={contact.id}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select ${contact.email}`}
                  checked={selected.has(contact.id)}
                  onChange={(event) => {
                    const next = new Set(selected);
                    if (event.target.checked) next.add(contact.id);
                    else next.delete(contact.id);
                    setSelected(next);
                  }}
                />
              </td>
              <td>
                <a href={`#/contacts/${contact.id}`}>{contact.email}</a>
              </td>
              <td>{contact.subscribed ? "Yes" : "No"}</td>
              <td>{formatDate(contact.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="pager">
        {list.data ? `${list.data.total} contacts` : null}{" "}
        <button type="button" className="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous
        </button>{" "}
        <button
          type="button"
          className="secondary"
          disabled={!list.data?.hasMore}
          onClick={() => list.data?.cursor && setCursors([...cursors, list.data.cursor])}
        >
          Next
        </button>
      </p>
      <ContactImport onDone={list.reload} />
    </Page>
  );
}

function NewContact(props: { onCreated: () => void }) {
  const [open, setOpen] = useState(false);
  const [email, setEmail] = useState("");
  const [data, setData] = useState("{}");
  if (!open) {
    return (
      <button type="button" onClick={() => setOpen(true)}>
        New contact
      </button>
    );
  }
  return (
    <ActionForm
      className="form inline"
      submit="Save the contact"
      action={async () => {
        orThrow(await api.POST("/contacts", { body: { email, data: parseObject(data) } }));
        setOpen(false);
        setEmail("");
        props.onCreated();
      }}
    >
      <Field label="Email" type="email" value={email} onChange={setEmail} required />
      <Field label="Data (JSON object)" value={data} onChange={setData} multiline rows={3} />
    </ActionForm>
  );
}

/** One contact: its data (editable), its events and its email activity. */
function ContactPage(props: { id: string }) {
  const path = { id: props.id };
  const contact = useLoad(async () => orThrow(await api.GET("/contacts/{id}", { params: { path } })).data, [props.id]);
  const events = useLoad(
    async () =>
      orThrow(await api.GET("/events/contact/{contactId}", { params: { path: { contactId: props.id }, query: { limit: "50" } } })).data,
    [props.id],
  );
  const activity = useLoad(
    async () => orThrow(await api.GET("/activity", { params: { query: { contactId: props.id, limit: "50" } } })).data,
    [props.id],
  );
  const [data, setData] = useState<string>();
  if (!contact.data) return <Loading loading={contact.loading} error={contact.error} />;
  const shown = data ?? JSON.stringify(contact.data.data ?? {}, null, 2);
  return (
    <Page
      title={contact.data.email}
      actions={
        <ActionButton
          label="Delete the contact"
          kind="danger"
          action={async () => {
            orThrow(await api.DELETE("/contacts/{id}", { params: { path } }));
            navigate("/contacts");
          }}
        />
      }
    >
      <p>
        {contact.data.subscribed ? "Subscribed" : "Unsubscribed"}{" "}
        <ActionButton
          label={contact.data.subscribed ? "Unsubscribe" : "Subscribe"}
          kind="secondary"
          action={async () => {
            orThrow(await api.PATCH("/contacts/{id}", { params: { path }, body: { subscribed: !contact.data?.subscribed } }));
            contact.reload();
          }}
        />
      </p>
      <ActionForm
        submit="Save the data"
        action={async () => {
          orThrow(await api.PATCH("/contacts/{id}", { params: { path }, body: { data: parseObject(shown) } }));
          setData(undefined);
          contact.reload();
        }}
      >
        <Field label="Data (JSON; a key set to null is removed)" value={shown} onChange={setData} multiline rows={8} />
      </ActionForm>
      <h2>Timeline</h2>
      <ul className="timeline">
        {[
          ...(events.data?.data ?? []).map((event) => ({ at: String(event.createdAt ?? ""), label: `Event ${event.name}` })),
          ...(activity.data?.data ?? []).map((item) => ({ at: item.createdAt, label: `${item.type}${item.url ? ` ${item.url}` : ""}` })),
        ]
          .sort((a, b) => b.at.localeCompare(a.at))
          .map((item, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: events and activity share no id space.
            <li key={index}>
              <time dateTime={item.at}>{formatDate(item.at)}</time> {item.label}
            </li>
          ))}
      </ul>
    </Page>
  );
}

export function parseObject(text: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text || "{}");
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error('Write a JSON object, like {"plan": "pro"}');
  return value as Record<string, unknown>;
}
