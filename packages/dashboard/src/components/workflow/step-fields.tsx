import { useId } from "react";
import { api, orThrow } from "../../api";
import { useLoad } from "../../hooks";
import { ConditionBuilder } from "../condition-builder";
import { Choice, CopyButton, Field, Select } from "../ui";
import { type DelayUnit, type Draft, delayUnits, type Row, type StepType, webhookMethods } from "./step-config";

/** The fields of one step type's form: plain controls, no JSON (SPEC.md "Workflows", the automation service's step-config.ts). */
export function StepFields(props: { type: StepType; draft: Draft; onChange: (draft: Draft) => void }) {
  const { draft } = props;
  const set = (patch: Partial<Draft>) => props.onChange({ ...draft, ...patch });
  switch (props.type) {
    case "SEND_EMAIL":
      return <SendEmailFields draft={draft} set={set} />;
    case "DELAY":
      return (
        <div className="inline-fields">
          <Field label="Wait for" type="number" value={draft.amount} onChange={(amount) => set({ amount })} required />
          <Select label="Unit" value={draft.unit} options={delayUnits} onChange={(unit) => set({ unit })} />
        </div>
      );
    case "WAIT_FOR_EVENT":
      return <WaitForEventFields draft={draft} set={set} />;
    case "CONDITION":
      return <ConditionFields draft={draft} set={set} />;
    case "WEBHOOK":
      return <WebhookFields draft={draft} set={set} />;
    case "UPDATE_CONTACT":
      return (
        <>
          <Rows legend="Contact fields to write" names="Field" rows={draft.data} onChange={(data) => set({ data })} />
          <Choice
            label="Subscription"
            value={draft.subscribed}
            empty="Leave as it is"
            options={[
              { value: "true", label: "Subscribe" },
              { value: "false", label: "Unsubscribe" },
            ]}
            onChange={(subscribed) => set({ subscribed: subscribed as Draft["subscribed"] })}
          />
          <p className="hint">Values true, false and plain numbers are written as such, anything else as text.</p>
        </>
      );
    case "EXIT":
      return <Field label="Reason (shown in the execution)" value={draft.reason} onChange={(reason) => set({ reason })} />;
  }
}

interface FieldsProps {
  draft: Draft;
  set: (patch: Partial<Draft>) => void;
}

function SendEmailFields({ draft, set }: FieldsProps) {
  const templates = useLoad(async () => orThrow(await api.GET("/templates", { params: { query: { pageSize: "100" } } })).data.data, []);
  const chosen = templates.data?.find((template) => template.id === draft.templateId);
  return (
    <>
      <Choice
        label="Template"
        value={draft.templateId}
        empty={templates.loading ? "Loading the templates…" : "Choose a template"}
        required
        options={(templates.data ?? []).map((template) => ({ value: template.id, label: template.name }))}
        onChange={(templateId) => set({ templateId })}
      />
      {templates.data?.length === 0 ? (
        <p className="hint">
          No template yet: <a href="#/templates/new">write one</a> first.
        </p>
      ) : null}
      <Field
        label="Subject (empty: the template's)"
        value={draft.subject}
        onChange={(subject) => set({ subject })}
        placeholder={chosen?.subject}
      />
      <Field
        label="From (empty: the template's)"
        type="email"
        value={draft.from}
        onChange={(from) => set({ from })}
        placeholder={chosen?.from}
      />
    </>
  );
}

function WaitForEventFields({ draft, set }: FieldsProps) {
  const names = useLoad(async () => orThrow(await api.GET("/events/names")).data.names, []);
  const listId = useId();
  return (
    <>
      <datalist id={listId}>
        {(names.data ?? []).map((name) => (
          <option key={name.name} value={name.name} />
        ))}
      </datalist>
      <EventNameField value={draft.eventName} listId={listId} onChange={(eventName) => set({ eventName })} />
      <div className="inline-fields">
        <Field
          label="Give up after"
          type="number"
          value={draft.timeoutAmount}
          onChange={(timeoutAmount) => set({ timeoutAmount })}
          required
        />
        <Select<DelayUnit> label="Unit" value={draft.timeoutUnit} options={delayUnits} onChange={(timeoutUnit) => set({ timeoutUnit })} />
      </div>
    </>
  );
}

/** A text field suggesting the project's event names (a name not tracked yet may be typed too). */
function EventNameField(props: { value: string; listId: string; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Event</label>
      <input id={id} list={props.listId} value={props.value} required onChange={(event) => props.onChange(event.target.value)} />
    </div>
  );
}

function ConditionFields({ draft, set }: FieldsProps) {
  const fields = useLoad(async () => orThrow(await api.GET("/workflows/fields")).data, []);
  // The contact's fields come with the builder; a workflow adds its events' and its own variables' prefixes.
  const extra = [
    ...(fields.data?.eventFields ?? []).map((field) => field.field),
    ...(fields.data?.variables ?? []).map((variable) => variable.replace("<key>", "")),
  ];
  return (
    <>
      <ConditionBuilder value={draft.condition} onChange={(condition) => set({ condition })} extraFields={extra} />
      <p className="hint">
        A contact's fields are <code>email</code>, <code>data.plan</code>…; the event that started the workflow is{" "}
        <code>trigger.data.&lt;key&gt;</code>, the execution's variables <code>context.&lt;key&gt;</code>.
      </p>
    </>
  );
}

function WebhookFields({ draft, set }: FieldsProps) {
  const secret = useLoad(async () => orThrow(await api.GET("/workflows/webhook-secret")).data.secret, []);
  return (
    <>
      <div className="inline-fields">
        <Select label="Method" value={draft.method} options={webhookMethods} onChange={(method) => set({ method })} />
        <Field label="URL" value={draft.url} onChange={(url) => set({ url })} required placeholder="https://example.com/hook" />
      </div>
      <Rows legend="Headers" names="Header" rows={draft.headers} onChange={(headers) => set({ headers })} />
      <Rows legend="Body fields (none: Herald's own payload)" names="Body field" rows={draft.body} onChange={(body) => set({ body })} />
      <p className="hint">
        Values may use Liquid: <code>{"{{ trigger.data.plan }}"}</code>, <code>{"{{ contactId }}"}</code>. Every request is signed in{" "}
        <code>X-Herald-Signature</code> with the project's secret
        {secret.data ? (
          <>
            {" "}
            <code data-testid="workflow-webhook-secret">{secret.data}</code>{" "}
            <CopyButton value={secret.data} label="Copy the signing secret" />
          </>
        ) : null}
        .
      </p>
    </>
  );
}

/** Name and value rows, added and removed with buttons. */
function Rows(props: { legend: string; names: string; rows: Row[]; onChange: (rows: Row[]) => void }) {
  const { rows } = props;
  const update = (index: number, patch: Partial<Row>) =>
    props.onChange(rows.map((row, each) => (each === index ? { ...row, ...patch } : row)));
  return (
    <fieldset className="rows">
      <legend>{props.legend}</legend>
      {rows.map((row, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are positional.
        <div className="row" key={index}>
          <input
            aria-label={`${props.names} ${index + 1} name`}
            value={row.name}
            onChange={(event) => update(index, { name: event.target.value })}
          />
          <input
            aria-label={`${props.names} ${index + 1} value`}
            value={row.value}
            onChange={(event) => update(index, { value: event.target.value })}
          />
          <button
            type="button"
            className="secondary small"
            aria-label={`Remove ${props.names.toLowerCase()} ${index + 1}`}
            onClick={() => props.onChange(rows.filter((_, each) => each !== index))}
          >
            ✕
          </button>
        </div>
      ))}
      <button type="button" className="secondary small" onClick={() => props.onChange([...rows, { name: "", value: "" }])}>
        Add a {props.names.toLowerCase()}
      </button>
    </fieldset>
  );
}
