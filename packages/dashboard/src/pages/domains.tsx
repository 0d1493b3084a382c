import { useState } from "react";
import { api, orThrow } from "../api";
import { ActionButton, ActionForm, CopyButton, EmptyState, Field, formatDate, Headings, Loading, Page } from "../components/ui";
import { useLoad, usePoll } from "../hooks";
import type { PageProps } from "../types";

/** Sending domains: add one, copy its DNS records, and watch it verify. */
export default function Domains({ project }: PageProps) {
  const list = useLoad(
    async () => orThrow(await api.GET("/domains/project/{projectId}", { params: { path: { projectId: project.id } } })).data,
    [project.id],
  );
  usePoll(list.data?.some((domain) => !domain.verified) ?? false, 5000, list.reload);
  const [domain, setDomain] = useState("");
  return (
    <Page title="Domains">
      <ActionForm
        className="form inline"
        submit="Add the domain"
        action={async () => {
          orThrow(await api.POST("/domains", { body: { domain } }));
          setDomain("");
          list.reload();
        }}
      >
        <Field label="Domain" value={domain} onChange={setDomain} required placeholder="mail.example.com" />
      </ActionForm>
      <Loading loading={list.loading && !list.data} error={list.error} />
      {list.data && list.data.length === 0 ? (
        <EmptyState>
          No sending domain yet: add the domain your emails come from above, then create its DNS records at your DNS provider. Emails are
          sent only from verified domains.
        </EmptyState>
      ) : null}
      {list.data?.map((each) => (
        <article key={each.id} className="card" aria-labelledby={`domain-${each.id}`}>
          <h2 id={`domain-${each.id}`}>
            {each.domain}{" "}
            <span className={each.verified ? "badge ok" : "badge"}>{each.verified ? "Verified" : String(each.status ?? "Pending")}</span>
          </h2>
          <p className="hint">Checked {formatDate(each.checkedAt)}</p>
          <table>
            <Headings names={["Type", "Name", "Value", "Status"]} />
            <tbody>
              {each.records.map((record) => (
                <tr key={`${record.type}-${record.name}`}>
                  <td>{record.type}</td>
                  <td>
                    <code>{record.name}</code> <CopyButton value={record.name} label={`Copy the name of the ${record.type} record`} />
                  </td>
                  <td className="wrap">
                    <code>{record.value}</code> <CopyButton value={record.value} label={`Copy the value of the ${record.type} record`} />
                  </td>
                  <td>{String(record.status ?? "")}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ActionButton
            label="Check now"
            kind="secondary"
            action={async () => {
              orThrow(await api.GET("/domains/{id}/verify", { params: { path: { id: each.id } } }));
              list.reload();
            }}
          />{" "}
          <ActionButton
            label="Remove"
            kind="danger"
            action={async () => {
              orThrow(await api.DELETE("/domains/{id}", { params: { path: { id: each.id } } }));
              list.reload();
            }}
          />
        </article>
      ))}
    </Page>
  );
}
