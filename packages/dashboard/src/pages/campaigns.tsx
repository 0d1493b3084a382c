import type { paths } from "@herald/client";
import { lazy, Suspense, useState } from "react";
import { api, orThrow } from "../api";
import { AudienceCount, type Condition, ConditionBuilder, emptyCondition } from "../components/condition-builder";
import { emptySource } from "../components/editor/blocks";
import type { EmailContent } from "../components/editor/email-composer";
import PreviewPanel, { type SampleData } from "../components/editor/preview-panel";
import {
  ActionButton,
  ActionForm,
  Choice,
  EmptyState,
  Field,
  formatDate,
  Headings,
  Loading,
  Page,
  percent,
  Select,
} from "../components/ui";
import { useLoad, usePoll } from "../hooks";
import { navigate, useRouteChoice, useRouteParam } from "../router";
import type { PageProps } from "../types";
import { Pager } from "./templates";

const TimeseriesChart = lazy(() => import("../components/chart"));
// The block editor and MJML load only when a campaign's body is composed.
const EmailComposer = lazy(() => import("../components/editor/email-composer"));
const statuses = ["ALL", "DRAFT", "SCHEDULED", "SENDING", "SENT", "CANCELLED"] as const;
const audienceTypes = ["ALL", "SEGMENT", "FILTERED"] as const;

export default function Campaigns({ route, user }: PageProps) {
  if (route[0] === "new") return <NewCampaign />;
  if (route[0] && route[1] === "edit") return <EditCampaign id={route[0]} />;
  return route[0] ? <CampaignPage id={route[0]} me={user.email} /> : <CampaignList />;
}

/** The campaigns, filtered by status and paged; both are in the link (#/campaigns?status=SENT&page=2). */
function CampaignList() {
  const [status, setStatus] = useRouteChoice("status", statuses);
  const [pageParam, setPageParam] = useRouteParam("page", "1");
  const page = Math.max(1, Number.parseInt(pageParam, 10) || 1);
  const setPage = (value: number) => setPageParam(String(value));
  const list = useLoad(
    async () =>
      orThrow(
        await api.GET("/campaigns", { params: { query: { page: String(page), pageSize: "20", ...(status === "ALL" ? {} : { status }) } } }),
      ).data,
    [status, page],
  );
  return (
    <Page
      title="Campaigns"
      actions={
        <button type="button" onClick={() => navigate("/campaigns/new")}>
          New campaign
        </button>
      }
    >
      <Select
        label="Status"
        value={status}
        options={statuses}
        onChange={(value) => {
          setStatus(value);
          setPage(1);
        }}
      />
      <Loading loading={list.loading && !list.data} error={list.error} />
      {list.data && list.data.data.length === 0 ? (
        <EmptyState>
          {status === "ALL" ? (
            <>
              No campaign yet. <a href="#/campaigns/new">Write your first campaign</a>: start from a template or from blocks, and send it to
              all your contacts or a segment.
            </>
          ) : (
            <>
              No campaign is {status.toLowerCase()}. <a href="#/campaigns">Show every campaign</a>
            </>
          )}
        </EmptyState>
      ) : null}
      <table hidden={list.data?.data.length === 0}>
        <Headings names={["Name", "Status", "Recipients", "Scheduled for"]} />
        <tbody>
          {list.data?.data.map((campaign) => (
            <tr key={campaign.id}>
              <td>
                <a href={`#/campaigns/${campaign.id}`}>{campaign.name}</a>
              </td>
              <td>{campaign.status}</td>
              <td>{campaign.totalRecipients}</td>
              <td>{formatDate(campaign.scheduledFor)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager page={page} totalPages={list.data?.totalPages ?? 1} onPage={setPage} />
    </Page>
  );
}

type Campaign = paths["/campaigns/{id}"]["get"]["responses"]["200"]["content"]["application/json"];
type CampaignBody = NonNullable<paths["/campaigns"]["post"]["requestBody"]>["content"]["application/json"];

/** A campaign from scratch, or with a template's subject and body copied in. */
function NewCampaign() {
  return (
    <Page title="New campaign">
      <CampaignForm
        submit="Create the campaign"
        save={async (body) => navigate(`/campaigns/${orThrow(await api.POST("/campaigns", { body })).data.data.id}`)}
      />
    </Page>
  );
}

/** A DRAFT or SCHEDULED campaign written again (a scheduled one stays scheduled); the others can only be duplicated. */
function EditCampaign(props: { id: string }) {
  const path = { id: props.id };
  const campaign = useLoad(async () => orThrow(await api.GET("/campaigns/{id}", { params: { path } })).data, [props.id]);
  if (!campaign.data) return <Loading loading={campaign.loading} error={campaign.error} />;
  const { name, status } = campaign.data;
  return (
    <Page title={`Edit: ${name}`}>
      {editable(status) ? (
        <CampaignForm
          campaign={campaign.data}
          submit="Save the campaign"
          save={async (body) => {
            orThrow(await api.PUT("/campaigns/{id}", { params: { path }, body }));
            navigate(`/campaigns/${props.id}`);
          }}
        />
      ) : (
        <EmptyState>
          A {status.toLowerCase()} campaign can no longer be changed. <a href={`#/campaigns/${props.id}`}>Duplicate it</a> to send it again
          with changes.
        </EmptyState>
      )}
    </Page>
  );
}

/** PUT /campaigns/:id is allowed while the campaign has not started (docs/api-decisions.md "What each status allows"). */
const editable = (status: string) => status === "DRAFT" || status === "SCHEDULED";

/**
 * A campaign's fields, body and audience, with the audience's recipient count and the server's preview. An edited
 * campaign keeps what the form does not show (type, description, reply-to): PUT replaces the campaign whole.
 */
function CampaignForm(props: { campaign?: Campaign; submit: string; save: (body: CampaignBody) => Promise<void> }) {
  const { campaign } = props;
  const templates = useLoad(
    async () => (campaign ? [] : orThrow(await api.GET("/templates", { params: { query: { pageSize: "100" } } })).data.data),
    [],
  );
  const segments = useLoad(async () => orThrow(await api.GET("/segments")).data, []);
  const [draft, setDraft] = useState({
    name: campaign?.name ?? "",
    subject: campaign?.subject ?? "",
    from: campaign?.from ?? "",
    fromName: campaign?.fromName ?? "",
  });
  const [content, setContent] = useState<EmailContent>(
    campaign ? { body: campaign.body, editor: campaign.editor } : { body: "", editor: emptySource() },
  );
  const [sample, setSample] = useState<SampleData>({ firstName: "Ada" });
  const [audienceType, setAudienceType] = useState<(typeof audienceTypes)[number]>(campaign?.audienceType ?? "ALL");
  const [segmentId, setSegmentId] = useState(campaign?.segmentId ?? "");
  const [templateId, setTemplateId] = useState("");
  const [condition, setCondition] = useState<Condition>(() => (campaign?.audienceCondition as Condition | null) ?? emptyCondition());
  const set = (key: keyof typeof draft) => (value: string) => setDraft({ ...draft, [key]: value });
  const audience =
    audienceType === "SEGMENT" ? { audienceType, segmentId } : audienceType === "FILTERED" ? { audienceType, condition } : { audienceType };
  return (
    <div className="split">
      <div>
        {campaign ? null : (
          <Choice
            label="Start from a template"
            value={templateId}
            empty="Blank"
            options={(templates.data ?? []).map((template) => ({ value: template.id, label: template.name }))}
            onChange={(id) => {
              setTemplateId(id);
              const template = templates.data?.find((each) => each.id === id);
              if (template) {
                setDraft({ ...draft, subject: template.subject, from: template.from, fromName: template.fromName ?? "" });
                setContent({ body: template.body, editor: template.editor });
              }
            }}
          />
        )}
        <ActionForm
          submit={props.submit}
          action={() =>
            props.save({
              ...draft,
              description: campaign?.description ?? undefined,
              replyTo: campaign?.replyTo ?? undefined,
              type: campaign?.type,
              body: content.body,
              editor: content.editor,
              fromName: draft.fromName || undefined,
              audienceType,
              ...(audienceType === "SEGMENT" ? { segmentId } : {}),
              ...(audienceType === "FILTERED" ? { audienceCondition: condition } : {}),
            } as CampaignBody)
          }
        >
          <Field label="Name" value={draft.name} onChange={set("name")} required />
          <Field label="From (an address of a verified domain)" type="email" value={draft.from} onChange={set("from")} required />
          <Field label="From name" value={draft.fromName} onChange={set("fromName")} />
          <Field label="Subject" value={draft.subject} onChange={set("subject")} required />
          <Suspense fallback={<p>Loading the editor…</p>}>
            <EmailComposer key={templateId} value={content} onChange={setContent} title={draft.subject} />
          </Suspense>
          <Select label="Audience" value={audienceType} options={audienceTypes} onChange={setAudienceType} />
          {audienceType === "SEGMENT" ? (
            <Choice
              label="Segment"
              value={segmentId}
              empty="Choose a segment"
              required
              options={(segments.data ?? []).map((segment) => ({ value: segment.id, label: segment.name }))}
              onChange={setSegmentId}
            />
          ) : null}
          {audienceType === "FILTERED" ? <ConditionBuilder value={condition} onChange={setCondition} /> : null}
          {audienceType !== "SEGMENT" || segmentId ? <AudienceCount audience={audience} /> : null}
        </ActionForm>
      </div>
      <PreviewPanel subject={draft.subject} body={content.body} sample={sample} onSample={setSample} />
    </div>
  );
}

/** One campaign: send now, schedule, cancel, a test to yourself in one click (or to another address), and its stats. */
function CampaignPage(props: { id: string; me: string }) {
  const path = { id: props.id };
  const campaign = useLoad(async () => orThrow(await api.GET("/campaigns/{id}", { params: { path } })).data, [props.id]);
  const stats = useLoad(async () => orThrow(await api.GET("/campaigns/{id}/stats", { params: { path } })).data, [props.id]);
  const sending = campaign.data?.status === "SENDING" || campaign.data?.status === "SCHEDULED";
  usePoll(true, sending ? 2000 : 10_000, stats.reload);
  usePoll(sending, 2000, campaign.reload);
  const [scheduledFor, setScheduledFor] = useState("");
  const [testEmail, setTestEmail] = useState("");
  const since = stats.data?.sentAt ?? campaign.data?.createdAt;
  const series = useLoad(
    async () =>
      typeof since === "string"
        ? orThrow(await api.GET("/analytics/timeseries", { params: { query: { from: since, to: new Date().toISOString() } } })).data
        : undefined,
    [since, stats.data?.sent],
  );
  if (!campaign.data) return <Loading loading={campaign.loading} error={campaign.error} />;
  const { status } = campaign.data;
  const refresh = () => {
    campaign.reload();
    stats.reload();
  };
  return (
    <Page title={campaign.data.name}>
      <p>
        Status: <strong data-testid="campaign-status">{status}</strong>
        {campaign.data.scheduledFor ? ` for ${formatDate(campaign.data.scheduledFor)}` : ""}
        {campaign.data.stopReason ? ` (${campaign.data.stopReason})` : ""}
      </p>
      <div className="toolbar">
        {editable(status) ? (
          <button type="button" className="secondary" onClick={() => navigate(`/campaigns/${props.id}/edit`)}>
            Edit
          </button>
        ) : null}
        {status === "DRAFT" ? (
          <>
            <ActionButton
              label="Send now"
              action={async () => {
                orThrow(await api.POST("/campaigns/{id}/send", { params: { path }, body: {} }));
                refresh();
              }}
            />
            <ActionForm
              className="form inline"
              submit="Schedule"
              action={async () => {
                orThrow(
                  await api.POST("/campaigns/{id}/send", {
                    params: { path },
                    body: { scheduledFor: new Date(scheduledFor).toISOString() },
                  }),
                );
                refresh();
              }}
            >
              <Field label="Send at" type="datetime-local" value={scheduledFor} onChange={setScheduledFor} required />
            </ActionForm>
          </>
        ) : null}
        {sending ? (
          <ActionButton
            label="Cancel"
            kind="danger"
            action={async () => {
              orThrow(await api.POST("/campaigns/{id}/cancel", { params: { path } }));
              refresh();
            }}
          />
        ) : null}
        <ActionButton
          label={`Send a test to ${props.me}`}
          kind="secondary"
          done={`Test sent to ${props.me}`}
          action={async () => {
            orThrow(await api.POST("/campaigns/{id}/test", { params: { path }, body: { email: props.me } }));
          }}
        />
        <ActionForm
          className="form inline"
          submit="Send a test"
          action={async () => {
            orThrow(await api.POST("/campaigns/{id}/test", { params: { path }, body: { email: testEmail } }));
          }}
        >
          <Field label="Test address" type="email" value={testEmail} onChange={setTestEmail} required />
        </ActionForm>
        <ActionButton
          label="Duplicate"
          kind="secondary"
          action={async () => navigate(`/campaigns/${orThrow(await api.POST("/campaigns/{id}/duplicate", { params: { path } })).data.id}`)}
        />
      </div>
      <h2>Stats</h2>
      {stats.data ? (
        <dl className="stats">
          <dt>Recipients</dt>
          <dd>{stats.data.totalRecipients}</dd>
          <dt>Sent</dt>
          <dd data-testid="stat-sent">{stats.data.sent}</dd>
          <dt>Delivered</dt>
          <dd>
            {stats.data.delivered} ({percent(stats.data.deliveryRate)})
          </dd>
          <dt>Opened</dt>
          <dd>
            {stats.data.opened} ({percent(stats.data.openRate)})
          </dd>
          <dt>Clicked</dt>
          <dd data-testid="stat-clicked">
            {stats.data.clicked} ({percent(stats.data.clickRate)})
          </dd>
          <dt>Bounced</dt>
          <dd>
            {stats.data.bounced} ({percent(stats.data.bounceRate)})
          </dd>
          <dt>Complaints</dt>
          <dd>{stats.data.complained}</dd>
          <dt>Unsubscribed</dt>
          <dd>{stats.data.unsubscribed}</dd>
        </dl>
      ) : (
        <Loading loading={stats.loading} error={stats.error} />
      )}
      {series.data ? (
        <Suspense fallback={<p>Loading the chart…</p>}>
          <TimeseriesChart buckets={series.data.buckets} series={["sent", "delivered", "opened", "clicked"]} />
        </Suspense>
      ) : null}
    </Page>
  );
}
