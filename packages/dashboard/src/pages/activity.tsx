import { lazy, Suspense } from "react";
import { api, orThrow } from "../api";
import { TopCampaignsTable, TopEventsTable } from "../components/top-tables";
import { Choice, EmptyState, formatDate, Headings, Loading, Page } from "../components/ui";
import { useLoad } from "../hooks";
import { useRouteParam } from "../router";
import type { PageProps } from "../types";

const TimeseriesChart = lazy(() => import("../components/chart"));

/** The activity feed (filtered by type, in the link: #/activity?type=email.opened), the last month's timeseries, top campaigns and top events. */
export default function Activity(_: PageProps) {
  const [type, setType] = useRouteParam("type");
  const types = useLoad(async () => orThrow(await api.GET("/activity/types")).data.types, []);
  const feed = useLoad(
    async () => orThrow(await api.GET("/activity", { params: { query: { limit: "50", ...(type ? { type } : {}) } } })).data,
    [type],
  );
  const series = useLoad(async () => orThrow(await api.GET("/analytics/timeseries", {})).data, []);
  const topCampaigns = useLoad(async () => orThrow(await api.GET("/analytics/top-campaigns", {})).data, []);
  const topEvents = useLoad(async () => orThrow(await api.GET("/analytics/top-events", {})).data, []);
  return (
    <Page title="Activity">
      {series.data ? (
        <Suspense fallback={<p>Loading the chart…</p>}>
          <TimeseriesChart buckets={series.data.buckets} series={["sent", "delivered", "opened", "clicked", "bounced"]} />
        </Suspense>
      ) : (
        <Loading loading={series.loading} error={series.error} />
      )}
      <div className="split">
        <section aria-labelledby="top-campaigns">
          <h2 id="top-campaigns">Top campaigns</h2>
          <TopCampaignsTable campaigns={topCampaigns.data?.data ?? []} />
        </section>
        <section aria-labelledby="top-events">
          <h2 id="top-events">Top events</h2>
          <TopEventsTable events={topEvents.data?.events ?? []} />
        </section>
      </div>
      <h2>Feed</h2>
      <Choice
        label="Type"
        value={type}
        empty="All types"
        // The type in the link stays a choice while the list of types loads, or once it has aged out of it.
        options={[...new Set([...(types.data ?? []).map((each) => each.type), ...(type ? [type] : [])])].map((each) => ({
          value: each,
          label: each,
        }))}
        onChange={setType}
      />
      <Loading loading={feed.loading && !feed.data} error={feed.error} />
      {feed.data && feed.data.data.length === 0 ? (
        <EmptyState>
          {type ? (
            <>
              No {type} activity.{" "}
              <button type="button" className="secondary small" onClick={() => setType("")}>
                Show every type
              </button>
            </>
          ) : (
            <>
              No activity yet: it starts with the first email sent. <a href="#/campaigns/new">Send a campaign</a>, or send from your
              application with POST /v1/send.
            </>
          )}
        </EmptyState>
      ) : null}
      <table hidden={feed.data?.data.length === 0}>
        <Headings names={["When", "Type", "Recipient", "Category"]} />
        <tbody>
          {feed.data?.data.map((item) => (
            <tr key={item.id}>
              <td>{formatDate(item.createdAt)}</td>
              <td>{item.type}</td>
              <td>{item.contactId ? <a href={`#/contacts/${item.contactId}`}>{item.recipient}</a> : item.recipient}</td>
              <td>{item.category}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
