import { Headings, percent } from "./ui";

/** Campaigns as GET /analytics/top-campaigns ranks them: each links to its page, with its sends and rates. */
export function TopCampaignsTable(props: {
  campaigns: ReadonlyArray<{ campaignId: string; name: string; sent: number; openRate: number; clickRate: number }>;
}) {
  return (
    <table>
      <Headings names={["Campaign", "Sent", "Opened", "Clicked"]} />
      <tbody>
        {props.campaigns.map((campaign) => (
          <tr key={campaign.campaignId}>
            <td>
              <a href={`#/campaigns/${campaign.campaignId}`}>{campaign.name}</a>
            </td>
            <td>{campaign.sent}</td>
            <td>{percent(campaign.openRate)}</td>
            <td>{percent(campaign.clickRate)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Event names as GET /analytics/top-events ranks them, with their counts. */
export function TopEventsTable(props: { events: ReadonlyArray<{ name: string; count: number }> }) {
  return (
    <table>
      <Headings names={["Event", "Count"]} />
      <tbody>
        {props.events.map((event) => (
          <tr key={event.name}>
            <td>{event.name}</td>
            <td>{event.count}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
