import { useState } from "react";
import { api, orThrow } from "../api";
import { AudienceCount, type Condition, ConditionBuilder, emptyCondition } from "../components/condition-builder";
import { ActionButton, ActionForm, EmptyState, Field, Headings, Loading, Page, Select } from "../components/ui";
import { useLoad } from "../hooks";
import type { PageProps } from "../types";

const segmentTypes = ["DYNAMIC", "STATIC"] as const;

export default function Segments(_: PageProps) {
  const list = useLoad(async () => orThrow(await api.GET("/segments")).data, []);
  return (
    <Page title="Segments">
      <Loading loading={list.loading && !list.data} error={list.error} />
      {list.data && list.data.length === 0 ? (
        <EmptyState>
          No segment yet: create one below, from conditions on your contacts' fields and events (dynamic) or from a list of addresses
          (static), then send campaigns to it.
        </EmptyState>
      ) : null}
      <table hidden={list.data?.length === 0}>
        <Headings names={["Name", "Type", "Members", "Actions"]} />
        <tbody>
          {list.data?.map((segment) => (
            <tr key={segment.id}>
              <td>{segment.name}</td>
              <td>{segment.type}</td>
              <td>{segment.memberCount}</td>
              <td>
                {segment.type === "STATIC" ? (
                  <AddMembers segmentId={segment.id} onAdded={list.reload} />
                ) : (
                  <>
                    <ActionButton
                      label="Refresh the count"
                      kind="secondary"
                      action={async () => {
                        orThrow(await api.POST("/segments/{id}/refresh", { params: { path: { id: segment.id } } }));
                        list.reload();
                      }}
                    />{" "}
                    {segment.trackMembership ? (
                      <ActionButton
                        label="Compute"
                        kind="secondary"
                        action={async () => {
                          orThrow(await api.POST("/segments/{id}/compute", { params: { path: { id: segment.id } } }));
                          list.reload();
                        }}
                      />
                    ) : null}
                  </>
                )}{" "}
                <ActionButton
                  label="Delete"
                  kind="danger"
                  action={async () => {
                    orThrow(await api.DELETE("/segments/{id}", { params: { path: { id: segment.id } } }));
                    list.reload();
                  }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <NewSegment onCreated={list.reload} />
    </Page>
  );
}

function NewSegment(props: { onCreated: () => void }) {
  const [name, setName] = useState("");
  const [type, setType] = useState<(typeof segmentTypes)[number]>("DYNAMIC");
  const [condition, setCondition] = useState<Condition>(emptyCondition);
  const [trackMembership, setTrackMembership] = useState(false);
  return (
    <section aria-labelledby="new-segment">
      <h2 id="new-segment">New segment</h2>
      <ActionForm
        submit="Create the segment"
        action={async () => {
          orThrow(
            await api.POST("/segments", { body: { name, type, ...(type === "DYNAMIC" ? { condition, trackMembership } : {}) } as never }),
          );
          setName("");
          props.onCreated();
        }}
      >
        <Field label="Name" value={name} onChange={setName} required />
        <Select label="Type" value={type} options={segmentTypes} onChange={setType} />
        {type === "DYNAMIC" ? (
          <>
            <ConditionBuilder value={condition} onChange={setCondition} />
            <AudienceCount audience={{ audienceType: "FILTERED", condition }} />
            <label>
              <input type="checkbox" checked={trackMembership} onChange={(event) => setTrackMembership(event.target.checked)} /> Track
              membership (entry and exit events)
            </label>
          </>
        ) : null}
      </ActionForm>
    </section>
  );
}

function AddMembers(props: { segmentId: string; onAdded: () => void }) {
  const [emails, setEmails] = useState("");
  return (
    <ActionForm
      className="form inline"
      submit="Add"
      action={async () => {
        const list = emails.split(/[\s,;]+/).filter(Boolean);
        orThrow(
          await api.POST("/segments/{id}/members", {
            params: { path: { id: props.segmentId } },
            body: { emails: list, createMissing: true },
          }),
        );
        setEmails("");
        props.onAdded();
      }}
    >
      <Field label="Emails to add" value={emails} onChange={setEmails} />
    </ActionForm>
  );
}
