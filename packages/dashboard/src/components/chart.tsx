import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

/** One bucket of GET /analytics/timeseries: its start (ISO 8601) and a count per series. */
export interface Bucket {
  date: string;
  [series: string]: string | number;
}

const colours = ["#2563eb", "#16a34a", "#d97706", "#dc2626", "#7c3aed", "#0891b2"];
const height = 240;
const day = 86_400;
const shortDate = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });

/**
 * The timeseries as a line chart with a time axis, a count axis and a legend that reads out the values under the
 * cursor (uPlot, loaded on demand with the pages that show it). A table of the same figures follows it for screen
 * readers and for copying.
 */
export default function TimeseriesChart(props: { buckets: Bucket[]; series: string[]; label?: string }) {
  const holder = useRef<HTMLDivElement>(null);
  const { buckets, series } = props;

  useEffect(() => {
    const element = holder.current;
    if (!element) return;
    const data: uPlot.AlignedData = [
      buckets.map((bucket) => Date.parse(bucket.date) / 1000),
      ...series.map((name) => buckets.map((bucket) => Number(bucket[name] ?? 0))),
    ];
    const plot = new uPlot(
      {
        width: Math.max(320, element.clientWidth),
        height,
        series: [
          { label: "Date", value: (_, seconds) => (seconds === null ? "—" : new Date(seconds * 1000).toLocaleDateString()) },
          ...series.map((name, index) => ({ label: name, stroke: colours[index % colours.length], width: 2, points: { size: 5 } })),
        ],
        // Ticks on whole days (a week or a month apart when the days are many), named by their date.
        axes: [
          { incrs: [day, 2 * day, 7 * day, 28 * day], values: (_, ticks) => ticks.map((seconds) => shortDate.format(seconds * 1000)) },
          { label: "emails", size: 56 },
        ],
        scales: { y: { range: (_, _min, max) => [0, Math.max(1, max)] } },
      },
      data,
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(320, element.clientWidth), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [buckets, series]);

  return (
    <figure className="chart">
      <div ref={holder} role="img" aria-label={`${props.label ?? "Chart"}: ${series.join(", ")} per day`} />
      <details>
        <summary>The figures as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Date</th>
              {series.map((name) => (
                <th key={name} scope="col">
                  {name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {buckets.map((bucket) => (
              <tr key={bucket.date}>
                <td>{new Date(bucket.date).toLocaleDateString()}</td>
                {series.map((name) => (
                  <td key={name}>{bucket[name] ?? 0}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
