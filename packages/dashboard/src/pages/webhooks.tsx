import type { paths } from "@herald/client";
import { useId, useState } from "react";
import { api, orThrow } from "../api";
import {
  ActionButton,
  ActionForm,
  Choice,
  CopyButton,
  EmptyState,
  Field,
  formatDate,
  Headings,
  Loading,
  Page,
  Select,
  TypedConfirm,
} from "../components/ui";
import { useLoad, usePoll } from "../hooks";
import { navigate, useRouteChoice } from "../router";
import type { PageProps } from "../types";

type Json<T> = T extends { content: { "application/json": infer Body } } ? Body : never;
type Endpoint = Json<paths["/settings/webhooks/{id}"]["get"]["responses"]["200"]>;
type MessageList = Json<paths["/settings/webhooks/{id}/messages"]["get"]["responses"]["200"]>;
type Message = MessageList["data"][number];
type EventType = Json<paths["/settings/webhooks/event-types"]["get"]["responses"]["200"]>["data"][number];

const statuses = ["all", "pending", "delivering", "delivered", "failed"] as const;
type StatusFilter = (typeof statuses)[number];

/**
 * Outbound webhooks: the project's endpoints, each with its event types, signing secret, message log and replay.
 * The project's owner and admins manage them; members read them (the API refuses them the rest), without the secret.
 */
export default function Webhooks({ route, project }: PageProps) {
  const manages = project.role === "OWNER" || project.role === "ADMIN";
  return route[0] ? <EndpointDetail id={route[0]} manages={manages} /> : <EndpointList manages={manages} />;
}

const readOnlyNote = "Only the project's owner and admins change webhooks; you see them as they are.";

/** The catalogue of event types, with their descriptions and example bodies, which every form below offers. */
function useEventTypes() {
  return useLoad(async () => orThrow(await api.GET("/settings/webhooks/event-types")).data.data, []);
}

/** The full signing secret, which the API returns only after a create or a rotation: shown here once. */
function SecretOnce(props: { secret: string; note?: string }) {
  return (
    <p className="banner" role="status">
      The signing secret, shown this once: <code data-testid="webhook-secret">{props.secret}</code>{" "}
      <CopyButton value={props.secret} label="Copy the signing secret" />
      {props.note ? <span className="hint"> {props.note}</span> : null}
    </p>
  );
}

function EndpointList(props: { manages: boolean }) {
  // At most 20 endpoints a project: one page holds them all.
  const list = useLoad(async () => orThrow(await api.GET("/settings/webhooks", { params: { query: { limit: "100" } } })).data, []);
  const catalogue = useEventTypes();
  const [created, setCreated] = useState<{ id: string; url: string; secret: string }>();
  return (
    <Page title="Webhooks">
      <p className="hint">
        Herald posts each event to the endpoints that want it, signed to the Standard Webhooks specification (headers webhook-id,
        webhook-timestamp and webhook-signature), and retries failures for more than a day.
      </p>
      {created ? (
        <>
          <SecretOnce secret={created.secret} note="Your application verifies every request with it." />
          <p>
            <a href={`#/webhooks/${created.id}`}>Open {created.url}</a>
          </p>
        </>
      ) : null}
      <Loading loading={list.loading && !list.data} error={list.error} />
      {list.data && list.data.data.length === 0 ? (
        <EmptyState>
          {props.manages
            ? "No endpoint yet. Add your application's URL below, with the event types it wants."
            : "No endpoint yet. The project's owner and admins add them."}
        </EmptyState>
      ) : null}
      {list.data && list.data.data.length > 0 ? (
        <table>
          <Headings names={["Endpoint", "Events", "State", "Pending", "Delivered", "Failed"]} />
          <tbody>
            {list.data.data.map((endpoint) => (
              <tr key={endpoint.id}>
                <td className="wrap">
                  <a href={`#/webhooks/${endpoint.id}`}>{endpoint.url}</a>
                  {endpoint.description ? <div className="hint">{endpoint.description}</div> : null}
                </td>
                <td>{eventTypesLabel(endpoint.eventTypes)}</td>
                <td>
                  <EndpointState endpoint={endpoint} />
                </td>
                <td>{endpoint.stats.pending}</td>
                <td>{endpoint.stats.delivered}</td>
                <td>{endpoint.stats.failed}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {props.manages ? null : <p className="hint">{readOnlyNote}</p>}
      {props.manages ? (
        <NewEndpoint
          catalogue={catalogue}
          onCreated={(endpoint) => {
            setCreated(endpoint);
            list.reload();
          }}
        />
      ) : null}
    </Page>
  );
}

function NewEndpoint(props: {
  catalogue: ReturnType<typeof useEventTypes>;
  onCreated: (endpoint: { id: string; url: string; secret: string }) => void;
}) {
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [eventTypes, setEventTypes] = useState<string[]>([]);
  const catalogue = props.catalogue;
  return (
    <>
      <h2>New endpoint</h2>
      <ActionForm
        submit="Add the endpoint"
        action={async () => {
          const body = { url, eventTypes, ...(description ? { description } : {}) };
          const endpoint = orThrow(await api.POST("/settings/webhooks", { body })).data;
          props.onCreated({ id: endpoint.id, url: endpoint.url, secret: endpoint.secret });
          setUrl("");
          setDescription("");
          setEventTypes([]);
        }}
      >
        <Field label="URL" type="url" value={url} onChange={setUrl} required placeholder="https://example.com/webhooks/herald" />
        <Field label="Description" value={description} onChange={setDescription} />
        <EventTypePicker catalogue={catalogue.data} error={catalogue.error} value={eventTypes} onChange={setEventTypes} />
      </ActionForm>
    </>
  );
}

const eventTypesLabel = (types: string[]) => (types.length === 0 ? "All events" : types.join(", "));

function EndpointState(props: { endpoint: Endpoint }) {
  const { endpoint } = props;
  if (endpoint.enabled) {
    return endpoint.failingSince ? (
      <span className="badge">Failing since {formatDate(endpoint.failingSince)}</span>
    ) : (
      <span className="badge ok">Enabled</span>
    );
  }
  return <span className="badge">{endpoint.disabledReason === "failing" ? "Disabled: failing" : "Disabled"}</span>;
}

/** Checkboxes of the catalogue, grouped by what the events are about; none ticked means every type, present and future. */
function EventTypePicker(props: {
  catalogue: EventType[] | undefined;
  error: string | undefined;
  value: string[];
  onChange: (value: string[]) => void;
}) {
  const groups = new Map<string, EventType[]>();
  for (const type of props.catalogue ?? []) {
    const group = type.type.split(".")[0] ?? type.type;
    groups.set(group, [...(groups.get(group) ?? []), type]);
  }
  const chosen = new Set(props.value);
  const toggle = (type: string, on: boolean) =>
    props.onChange((props.catalogue ?? []).map((each) => each.type).filter((each) => (each === type ? on : chosen.has(each))));
  return (
    <fieldset className="conditions">
      <legend>Event types</legend>
      <p className="hint">{props.value.length === 0 ? "None ticked: every event type is sent." : `${props.value.length} chosen.`}</p>
      <Loading loading={!props.catalogue} error={props.error} />
      {[...groups].map(([group, types]) => (
        <fieldset key={group} className="filter">
          <legend className="hint">{group}</legend>
          {types.map((type) => (
            <label key={type.type} title={type.description}>
              <input type="checkbox" checked={chosen.has(type.type)} onChange={(event) => toggle(type.type, event.target.checked)} />{" "}
              {type.type}
            </label>
          ))}
        </fieldset>
      ))}
      {props.value.length > 0 ? (
        <button type="button" className="secondary small" onClick={() => props.onChange([])}>
          Send every type
        </button>
      ) : null}
    </fieldset>
  );
}

function EndpointDetail(props: { id: string; manages: boolean }) {
  const path = { id: props.id };
  const endpoint = useLoad(async () => orThrow(await api.GET("/settings/webhooks/{id}", { params: { path } })).data, [props.id]);
  const catalogue = useEventTypes();
  const [rotated, setRotated] = useState<{ secret: string; previousSecretExpiresAt: string }>();
  const [messagesVersion, setMessagesVersion] = useState(0);
  const refreshMessages = () => {
    setMessagesVersion((value) => value + 1);
    endpoint.reload();
  };
  if (!endpoint.data) return <Loading loading={endpoint.loading} error={endpoint.error} />;
  const current = endpoint.data;
  return (
    <Page
      title={current.url}
      actions={
        props.manages ? (
          <ActionButton
            label={current.enabled ? "Disable" : "Enable"}
            kind={current.enabled ? "secondary" : undefined}
            action={async () => {
              orThrow(await api.PATCH("/settings/webhooks/{id}", { params: { path }, body: { enabled: !current.enabled } }));
              endpoint.reload();
            }}
          />
        ) : undefined
      }
    >
      <p>
        <a href="#/webhooks">All endpoints</a>
      </p>
      {current.description ? <p>{current.description}</p> : null}
      {props.manages ? null : <p className="hint">{readOnlyNote}</p>}
      {!current.enabled && current.disabledReason === "failing" ? (
        <p className="banner danger" role="status">
          Disabled: every attempt failed since {formatDate(current.failingSince)}. Enabling it sends new events again; the events of the
          pause are sent only if you recover them below.
        </p>
      ) : null}
      {current.enabled && current.failingSince ? (
        <p className="banner" role="status">
          Every attempt has failed since {formatDate(current.failingSince)}: Herald keeps retrying, and disables the endpoint if it goes on
          failing.
        </p>
      ) : null}
      <dl className="stats">
        <dt>State</dt>
        <dd>
          <EndpointState endpoint={current} />
        </dd>
        <dt>Events</dt>
        <dd>{eventTypesLabel(current.eventTypes)}</dd>
        <dt>Messages</dt>
        <dd data-testid="webhook-stats">
          {current.stats.pending} pending, {current.stats.delivered} delivered, {current.stats.failed} failed
        </dd>
        <dt>Signing secret</dt>
        <dd>
          <code>{current.secretPrefix.endsWith("…") ? current.secretPrefix : `${current.secretPrefix}…`}</code>
        </dd>
        <dt>Created</dt>
        <dd>{formatDate(current.createdAt)}</dd>
      </dl>
      {props.manages ? (
        <Management
          endpoint={current}
          catalogue={catalogue}
          rotated={rotated}
          onRotated={(answer) => {
            setRotated(answer);
            endpoint.reload();
          }}
          onChanged={endpoint.reload}
          onSent={refreshMessages}
        />
      ) : null}
      <h2>Messages</h2>
      <MessageLog key={messagesVersion} endpointId={props.id} manages={props.manages} onChanged={endpoint.reload} />
      {props.manages ? (
        <>
          <h2>Danger zone</h2>
          <TypedConfirm
            label="Delete the endpoint"
            phrase="delete"
            action={async () => {
              orThrow(await api.DELETE("/settings/webhooks/{id}", { params: { path } }));
              navigate("/webhooks");
            }}
          />
        </>
      ) : null}
    </Page>
  );
}

/** What an admin does to an endpoint: rotate its secret, edit it, send it a test event, recover its failures. */
function Management(props: {
  endpoint: Endpoint;
  catalogue: ReturnType<typeof useEventTypes>;
  rotated: { secret: string; previousSecretExpiresAt: string } | undefined;
  onRotated: (answer: { secret: string; previousSecretExpiresAt: string }) => void;
  onChanged: () => void;
  onSent: () => void;
}) {
  const path = { id: props.endpoint.id };
  const { rotated } = props;
  return (
    <>
      {rotated ? (
        <SecretOnce
          secret={rotated.secret}
          note={`The previous secret also signs every request until ${formatDate(rotated.previousSecretExpiresAt)}: update your application before then.`}
        />
      ) : null}
      <TypedConfirm
        label="Rotate the signing secret"
        phrase="rotate"
        action={async () => props.onRotated(orThrow(await api.POST("/settings/webhooks/{id}/rotate-secret", { params: { path } })).data)}
      />
      <h2>Settings</h2>
      <EndpointForm key={props.endpoint.updatedAt} endpoint={props.endpoint} catalogue={props.catalogue} onSaved={props.onChanged} />
      <h2>Send a test event</h2>
      <TestSend endpointId={props.endpoint.id} catalogue={props.catalogue.data} onSent={props.onSent} />
      <h2>Recover failed messages</h2>
      <Recover endpointId={props.endpoint.id} onQueued={props.onSent} />
    </>
  );
}

function EndpointForm(props: { endpoint: Endpoint; catalogue: ReturnType<typeof useEventTypes>; onSaved: () => void }) {
  const [url, setUrl] = useState(props.endpoint.url);
  const [description, setDescription] = useState(props.endpoint.description);
  const [eventTypes, setEventTypes] = useState(props.endpoint.eventTypes);
  return (
    <ActionForm
      submit="Save the endpoint"
      action={async () => {
        orThrow(
          await api.PATCH("/settings/webhooks/{id}", {
            params: { path: { id: props.endpoint.id } },
            body: { url, description, eventTypes },
          }),
        );
        props.onSaved();
      }}
    >
      <Field label="URL" type="url" value={url} onChange={setUrl} required />
      <Field label="Description" value={description} onChange={setDescription} />
      <EventTypePicker catalogue={props.catalogue.data} error={props.catalogue.error} value={eventTypes} onChange={setEventTypes} />
    </ActionForm>
  );
}

/** An example event of the chosen type, sent now whatever the endpoint subscribes to; its message joins the log. */
function TestSend(props: { endpointId: string; catalogue: EventType[] | undefined; onSent: () => void }) {
  const [type, setType] = useState("");
  const [sent, setSent] = useState<Message>();
  const example = props.catalogue?.find((each) => each.type === type)?.example;
  return (
    <>
      <ActionForm
        className="form inline"
        submit="Send the test event"
        action={async () => {
          const message = orThrow(
            await api.POST("/settings/webhooks/{id}/test", { params: { path: { id: props.endpointId } }, body: { eventType: type } }),
          ).data;
          setSent(message);
          props.onSent();
        }}
      >
        <Choice
          label="Event type"
          value={type}
          onChange={setType}
          empty="Choose a type"
          required
          options={(props.catalogue ?? []).map((each) => ({ value: each.type, label: each.type }))}
        />
      </ActionForm>
      {sent ? (
        <p role="status">
          Test message <code>{sent.id}</code> queued.
        </p>
      ) : null}
      {example ? (
        <figure>
          <figcaption className="hint">Example body of {type}</figcaption>
          <pre className="json">{JSON.stringify(example, null, 2)}</pre>
        </figure>
      ) : null}
    </>
  );
}

/** The local time a datetime-local input holds, as the ISO instant the API takes. */
const isoOfLocal = (value: string) => new Date(value).toISOString();
/** A datetime-local value for a day ago, the default of a recovery. */
function dayAgoLocal(): string {
  const date = new Date(Date.now() - 24 * 3600 * 1000);
  date.setMinutes(date.getMinutes() - date.getTimezoneOffset());
  return date.toISOString().slice(0, 16);
}

function Recover(props: { endpointId: string; onQueued: () => void }) {
  const [since, setSince] = useState(dayAgoLocal);
  const [queued, setQueued] = useState<number>();
  return (
    <>
      <p className="hint">Every message to this endpoint that failed since this time is sent again.</p>
      <ActionForm
        className="form inline"
        submit="Send the failed messages again"
        action={async () => {
          const answer = orThrow(
            await api.POST("/settings/webhooks/{id}/recover", {
              params: { path: { id: props.endpointId } },
              body: { since: isoOfLocal(since) },
            }),
          ).data;
          setQueued(answer.queued);
          props.onQueued();
        }}
      >
        <Field label="Failed since" type="datetime-local" value={since} onChange={setSince} required />
      </ActionForm>
      {queued !== undefined ? <p role="status">{queued === 1 ? "1 message queued again." : `${queued} messages queued again.`}</p> : null}
    </>
  );
}

/** The messages, newest first, a page at a time, filtered by a status in the link (#/webhooks/…?status=failed); polled while one is on its way. */
function MessageLog(props: { endpointId: string; manages: boolean; onChanged: () => void }) {
  const [status, setStatus] = useRouteChoice<StatusFilter>("status", statuses);
  const [more, setMore] = useState<Message[]>([]);
  const [cursor, setCursor] = useState<string>();
  const first = useLoad(async () => {
    const query = { limit: "20", ...(status === "all" ? {} : { status }) };
    const page = orThrow(await api.GET("/settings/webhooks/{id}/messages", { params: { path: { id: props.endpointId }, query } })).data;
    setMore([]);
    setCursor(page.hasMore ? page.cursor : undefined);
    return page.data;
  }, [props.endpointId, status]);
  const messages = [...(first.data ?? []), ...more];
  usePoll(
    more.length === 0 && messages.some((message) => message.status === "pending" || message.status === "delivering"),
    3000,
    first.reload,
  );
  return (
    <section aria-label="Messages">
      <Select label="Status" value={status} options={statuses} onChange={setStatus} />
      <Loading loading={first.loading && !first.data} error={first.error} />
      {first.data && messages.length === 0 ? (
        <EmptyState>
          {status === "all"
            ? `No message yet. Herald posts the event types this endpoint wants as they happen.${props.manages ? " Send a test event above to see one now." : ""}`
            : `No message yet. The filter shows ${status} messages only: choose “all” to see every one.`}
        </EmptyState>
      ) : null}
      {messages.map((message) => (
        <MessageCard
          key={message.id}
          endpointId={props.endpointId}
          message={message}
          manages={props.manages}
          onRetried={() => {
            first.reload();
            props.onChanged();
          }}
        />
      ))}
      {cursor ? (
        <ActionButton
          label="Show older messages"
          kind="secondary"
          action={async () => {
            const query = { limit: "20", cursor, ...(status === "all" ? {} : { status }) };
            const page = orThrow(
              await api.GET("/settings/webhooks/{id}/messages", { params: { path: { id: props.endpointId }, query } }),
            ).data;
            setMore((previous) => [...previous, ...page.data]);
            setCursor(page.hasMore ? page.cursor : undefined);
          }}
        />
      ) : null}
    </section>
  );
}

function MessageCard(props: { endpointId: string; message: Message; manages: boolean; onRetried: () => void }) {
  const { message } = props;
  const [open, setOpen] = useState(false);
  const titleId = useId();
  return (
    <article className="card" aria-labelledby={titleId} data-testid="webhook-message">
      <h3 id={titleId}>
        {message.eventType} <span className={message.status === "delivered" ? "badge ok" : "badge"}>{message.status}</span>
      </h3>
      <p className="hint">
        <code>{message.id}</code> · created {formatDate(message.createdAt)} ·{" "}
        {message.attempts.length === 1 ? "1 attempt" : `${message.attempts.length} attempts`}
        {message.deliveredAt ? ` · delivered ${formatDate(message.deliveredAt)}` : ""}
        {message.nextAttemptAt ? ` · next attempt ${formatDate(message.nextAttemptAt)}` : ""}
      </p>
      <div className="toolbar">
        <button type="button" className="secondary small" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "Hide the attempts" : "Attempts"}
        </button>
        {props.manages && message.status !== "delivering" ? (
          <ActionButton
            label="Retry"
            kind="secondary"
            action={async () => {
              orThrow(
                await api.POST("/settings/webhooks/{id}/messages/{messageId}/retry", {
                  params: { path: { id: props.endpointId, messageId: message.id } },
                }),
              );
              props.onRetried();
            }}
          />
        ) : null}
      </div>
      {open ? (
        <>
          <table aria-label={`Attempts of ${message.id}`}>
            <Headings names={["When", "Status code", "Duration", "Error", "Response"]} />
            <tbody>
              {message.attempts.map((attempt, index) => (
                // Attempts are never reordered or removed: their position is their identity.
                // biome-ignore lint/suspicious/noArrayIndexKey: see above
                <tr key={index}>
                  <td>{formatDate(attempt.at)}</td>
                  <td>{attempt.statusCode ?? "—"}</td>
                  <td>{attempt.durationMs} ms</td>
                  <td>{attempt.error ?? ""}</td>
                  <td className="wrap">{attempt.response ? <code>{attempt.response}</code> : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <figure>
            <figcaption className="hint">Body</figcaption>
            <pre className="json">{JSON.stringify(message.payload, null, 2)}</pre>
          </figure>
        </>
      ) : null}
    </article>
  );
}
