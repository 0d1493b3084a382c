import { lazy, Suspense } from "react";
import { api, orThrow } from "../api";
import { guardPercent, useSecurity } from "../components/reputation";
import { TopCampaignsTable, TopEventsTable } from "../components/top-tables";
import { CopyButton, formatDate, Headings, Loading, Page, percent } from "../components/ui";
import { useLoad } from "../hooks";
import { navigate, routeQuery } from "../router";
import type { PageProps } from "../types";

const TimeseriesChart = lazy(() => import("../components/chart"));

const periods = [7, 30] as const;
type Period = (typeof periods)[number];

/** The UTC date `days - 1` days before today: with today's bucket, `days` whole days of GET /analytics/timeseries. */
const firstDayOf = (days: number) => new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);

/** The period in the link (#/overview?days=30), so that a shared link opens on the same figures. */
const periodOfRoute = (): Period => (routeQuery().get("days") === "30" ? 30 : 7);

type Totals = Record<"sent" | "delivered" | "opened" | "clicked" | "bounced" | "complained", number>;

/** The period's counts, summed from its daily buckets. */
function totalsOf(buckets: ReadonlyArray<Record<string, string | number>>): Totals {
  const totals: Totals = { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 };
  for (const bucket of buckets) for (const name of Object.keys(totals) as (keyof Totals)[]) totals[name] += Number(bucket[name] ?? 0);
  return totals;
}

const rateOf = (count: number, sent: number) => (sent === 0 ? 0 : count / sent);

/** A rate against the reputation guard's levels: fine, past the warning level, or past the suspension level. */
function standing(rate: number, warn: number | undefined, suspend: number | undefined): "ok" | "warn" | "danger" {
  if (suspend !== undefined && suspend > 0 && rate >= suspend) return "danger";
  if (warn !== undefined && warn > 0 && rate >= warn) return "warn";
  return "ok";
}

/**
 * The project at a glance: its mail over the last 7 or 30 days (counts, rates against the reputation guard's levels, and
 * the daily chart), its top campaigns and events, what is coming up, then the onboarding checklist and the public key.
 */
export default function Overview({ project }: PageProps) {
  const days = periodOfRoute();
  const series = useLoad(
    async () => orThrow(await api.GET("/analytics/timeseries", { params: { query: { from: firstDayOf(days), interval: "day" } } })).data,
    [project.id, days],
  );
  const security = useSecurity(project.id);
  // The figures first: the panels below them ask once the period's counts have answered, rather than sharing the
  // browser's six connections and the stack's cores with them on the first screen.
  const figuresAnswered = series.data !== undefined || series.error !== undefined;
  const topCampaigns = useLoad(
    async () => orThrow(await api.GET("/analytics/top-campaigns", { params: { query: { metric: "sent", limit: "5" } } })).data,
    [project.id],
    figuresAnswered,
  );
  const topEvents = useLoad(
    async () => orThrow(await api.GET("/analytics/top-events", { params: { query: { limit: "5", days: String(days) } } })).data,
    [project.id, days],
    figuresAnswered,
  );
  const upcoming = useLoad(
    async () => orThrow(await api.GET("/activity/upcoming", { params: { query: { limit: "5" } } })).data,
    [project.id],
    figuresAnswered,
  );
  const setup = useLoad(
    async () => orThrow(await api.GET("/projects/{id}/setup-state", { params: { path: { id: project.id } } })).data,
    [project.id],
    figuresAnswered,
  );
  const domains = useLoad(
    async () => orThrow(await api.GET("/domains/project/{projectId}", { params: { path: { projectId: project.id } } })).data,
    [project.id],
    figuresAnswered,
  );

  const totals = series.data ? totalsOf(series.data.buckets) : undefined;
  const levels = security.data?.levels;
  const figures: Array<{ name: keyof Totals; label: string; level?: "bounce" | "complaint" }> = [
    { name: "delivered", label: "Delivered" },
    { name: "opened", label: "Opened" },
    { name: "clicked", label: "Clicked" },
    { name: "bounced", label: "Bounced", level: "bounce" },
    { name: "complained", label: "Complained", level: "complaint" },
  ];
  const steps: [string, boolean | undefined, string][] = [
    ["Create a project", setup.data?.projectCreated, "#/settings"],
    ["Add and verify a sending domain", domains.data?.some((domain) => domain.verified), "#/domains"],
    ["Use an API key", setup.data?.apiKeyUsed, "#/settings"],
    ["Send an email", setup.data?.emailSent, "#/templates"],
    ["Invite a teammate", setup.data?.memberInvited, "#/settings"],
  ];

  return (
    <Page
      title={project.name}
      actions={
        <fieldset className="segmented">
          <legend className="sr-only">Period</legend>
          {periods.map((period) => (
            <label key={period}>
              <input type="radio" name="period" checked={days === period} onChange={() => navigate(`/overview?days=${period}`)} />
              Last {period} days
            </label>
          ))}
        </fieldset>
      }
    >
      <section aria-labelledby="mail">
        <h2 id="mail">Mail, last {days} days</h2>
        <Loading loading={series.loading && !series.data} error={series.error} />
        {totals ? (
          <dl className="figures" data-testid="overview-figures">
            <div>
              <dt>Sent</dt>
              <dd data-testid="figure-sent">{totals.sent}</dd>
            </div>
            {figures.map(({ name, label, level }) => {
              const rate = rateOf(totals[name], totals.sent);
              const warn = level === "bounce" ? levels?.warnBounceRate : level === "complaint" ? levels?.warnComplaintRate : undefined;
              const suspend =
                level === "bounce" ? levels?.suspendBounceRate : level === "complaint" ? levels?.suspendComplaintRate : undefined;
              const state = level ? standing(rate, warn, suspend) : "ok";
              return (
                <div key={name} className={`figure-${state}`}>
                  <dt>{label}</dt>
                  <dd data-testid={`figure-${name}`}>
                    {totals[name]} <span data-testid={`rate-${name}`}>({percent(rate)})</span>
                  </dd>
                  {level && warn !== undefined ? (
                    <dd className="hint">
                      Warning at {guardPercent(warn)}, suspension at {guardPercent(suspend)}
                      {state === "ok" ? "" : state === "warn" ? ": past the warning level" : ": past the suspension level"}
                    </dd>
                  ) : null}
                </div>
              );
            })}
          </dl>
        ) : null}
        <p className="hint">Rates are per email sent. Clicks count every click, so the click rate can exceed the open rate.</p>
        {series.data ? (
          <Suspense fallback={<p>Loading the chart…</p>}>
            <TimeseriesChart
              label={`Mail over the last ${days} days`}
              buckets={series.data.buckets}
              series={["sent", "delivered", "opened", "clicked", "bounced", "complained"]}
            />
          </Suspense>
        ) : null}
      </section>
      <div className="split">
        <section aria-labelledby="overview-campaigns">
          <h2 id="overview-campaigns">Top campaigns</h2>
          {topCampaigns.data && topCampaigns.data.data.length === 0 ? (
            <p className="hint">
              No campaign has been sent yet. <a href="#/campaigns">Write one</a> to a segment of your contacts.
            </p>
          ) : (
            <TopCampaignsTable campaigns={topCampaigns.data?.data ?? []} />
          )}
        </section>
        <section aria-labelledby="overview-events">
          <h2 id="overview-events">Top events, last {days} days</h2>
          {topEvents.data && topEvents.data.events.length === 0 ? (
            <p className="hint">No event tracked yet: send them with POST /v1/track and your public key below.</p>
          ) : (
            <TopEventsTable events={topEvents.data?.events ?? []} />
          )}
        </section>
      </div>
      <section aria-labelledby="overview-upcoming">
        <h2 id="overview-upcoming">Coming up</h2>
        {upcoming.data && upcoming.data.data.length === 0 ? (
          <p className="hint">Nothing is scheduled, and no workflow is waiting to send.</p>
        ) : (
          <table>
            <Headings names={["When", "What", "Name"]} />
            <tbody>
              {upcoming.data?.data.map((item) => (
                <tr key={`${item.type}-${item.type === "workflow" ? item.executionId : item.id}`}>
                  <td>{formatDate(item.scheduledFor)}</td>
                  <td>{item.type === "campaign" ? "Campaign" : `Workflow step ${item.stepType}`}</td>
                  <td>
                    <a href={item.type === "campaign" ? `#/campaigns/${item.id}` : `#/workflows/${item.id}`}>{item.name}</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <h2>Getting started</h2>
      <Loading loading={setup.loading && !setup.data} error={setup.error} />
      <ol className="checklist">
        {steps.map(([label, done, href]) => (
          <li key={label} className={done ? "done" : undefined}>
            <span aria-hidden="true">{done ? "✔" : "○"}</span> <a href={href}>{label}</a>
            <span className="sr-only">{done ? " (done)" : " (to do)"}</span>
          </li>
        ))}
      </ol>
      <h2>Public key</h2>
      <p>
        <code>{project.publicKey}</code> <CopyButton value={project.publicKey} label="Copy the public key" />
      </p>
      <p className="hint">For POST /v1/track from browsers and apps. The secret key is shown once, in Settings, when keys are rotated.</p>
    </Page>
  );
}
