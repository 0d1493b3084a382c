/** A line chart of the timeseries in plain SVG, loaded on demand (React.lazy) with the pages that show it. */
export default function TimeseriesChart(props: { buckets: { date: string; [series: string]: string | number }[]; series: string[] }) {
  const width = 640;
  const height = 200;
  const pad = 28;
  const max = Math.max(1, ...props.buckets.flatMap((bucket) => props.series.map((name) => Number(bucket[name] ?? 0))));
  const x = (index: number) => pad + (index * (width - 2 * pad)) / Math.max(1, props.buckets.length - 1);
  const y = (value: number) => height - pad - (value * (height - 2 * pad)) / max;
  const colours = ["#2563eb", "#16a34a", "#d97706", "#dc2626", "#7c3aed", "#0891b2"];
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Chart of ${props.series.join(", ")} over time`}>
        <line x1={pad} y1={height - pad} x2={width - pad} y2={height - pad} stroke="#999" />
        <text x={4} y={pad} fontSize="10">
          {max}
        </text>
        {props.series.map((name, index) =>
          props.buckets.map((bucket, i) => (
            <circle key={`${name}-${bucket.date}`} cx={x(i)} cy={y(Number(bucket[name] ?? 0))} r="3" fill={colours[index % colours.length]}>
              <title>{`${name} ${bucket.date}: ${bucket[name] ?? 0}`}</title>
            </circle>
          )),
        )}
        {props.series.map((name, index) => (
          <polyline
            key={name}
            fill="none"
            stroke={colours[index % colours.length]}
            strokeWidth="2"
            points={props.buckets.map((bucket, i) => `${x(i)},${y(Number(bucket[name] ?? 0))}`).join(" ")}
          />
        ))}
      </svg>
      <figcaption>
        {props.series.map((name, index) => (
          <span key={name} className="legend" style={{ color: colours[index % colours.length] }}>
            ■ {name}{" "}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
