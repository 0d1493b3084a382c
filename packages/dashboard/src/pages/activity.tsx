import { lazy, Suspense } from "react";
import { api, orThrow } from "../api";
import { TopCampaignsTable, TopEventsTable } from "../components/top-tables";
import { formatDate, Headings, Loading, Page } from "../components/ui";
import { useLoad } from "../hooks";
import type { PageProps } from "../types";

const TimeseriesChart = lazy(() => import("../components/chart"));

/** The activity feed, the last month's timeseries, top campaigns and top events. */
export default function Activity(_: PageProps) {
  const feed = useLoad(async () => orThrow(await api.GET("/activity", { params: { query: { limit: "50" } } })).data, []);
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
      <Loading loading={feed.loading && !feed.data} error={feed.error} />
      <table>
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
