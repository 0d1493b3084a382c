import { api, orThrow } from "../api";
import { useLoad } from "../hooks";
import { Headings, Loading } from "./ui";

/** A rate as the guard's messages write it: 12.5 %, 0.075 %. */
export const guardPercent = (rate: number | null | undefined) =>
  rate === null || rate === undefined ? "—" : `${Number((rate * 100).toPrecision(3))} %`;

const remedy =
  "Remove addresses that bounce and contacts who did not ask for your mail, and send only to people who opted in. " +
  "A suspended project is re-enabled by the operator of this Herald deployment.";

async function fetchSecurity(projectId: string) {
  return orThrow(await api.GET("/users/@me/projects/{id}/security", { params: { path: { id: projectId } } })).data;
}

/** A read of each project's security state, shared by the components that ask within `sharedForMs` of it. */
const recentReads = new Map<string, { at: number; read: ReturnType<typeof fetchSecurity> }>();
const sharedForMs = 5_000;

function readSecurity(projectId: string): ReturnType<typeof fetchSecurity> {
  const recent = recentReads.get(projectId);
  if (recent && Date.now() - recent.at < sharedForMs) return recent.read;
  const read = fetchSecurity(projectId);
  recentReads.set(projectId, { at: Date.now(), read });
  read.catch(() => recentReads.delete(projectId));
  return read;
}

/**
 * The project's security state (GET /users/@me/projects/:id/security): the guard's rates, levels, warning and
 * suspension. The banner of every page and the page's own figures ask for it as they mount: one request serves both.
 */
export function useSecurity(projectId: string) {
  return useLoad(() => readSecurity(projectId), [projectId]);
}

/** The reputation guard's banner on every page: the suspension, or else the warning, with the rate and what to do. */
export function ReputationBanner(props: { projectId: string }) {
  const security = useSecurity(props.projectId);
  const state = security.data;
  if (!state) return null;
  if (state.suspended) {
    return (
      <p className="banner danger" role="alert">
        <strong>Sending is suspended.</strong> {state.suspensionReason}. New emails are refused, campaigns are paused and queued emails are
        held; tracking and unsubscribe links keep working. {remedy} <a href="#/settings">Sending reputation</a>
      </p>
    );
  }
  if (state.warning) {
    return (
      <p className="banner" role="status">
        <strong>Your sending reputation needs attention.</strong> {state.warning.reason}. {remedy}{" "}
        <a href="#/settings">Sending reputation</a>
      </p>
    );
  }
  return null;
}

/** The settings page's section: the guard's rates, the 30-day figures, and the suspension history. */
export function ReputationSection(props: { projectId: string }) {
  const security = useSecurity(props.projectId);
  const state = security.data;
  return (
    <section aria-labelledby="reputation">
      <h2 id="reputation">Sending reputation</h2>
      <Loading loading={security.loading && !state} error={security.error} />
      {state ? (
        <>
          <p>
            Over the last {state.window.days} days ({state.window.sent} emails): bounce rate {guardPercent(state.window.bounceRate)},
            complaint rate {guardPercent(state.window.complaintRate)}. Over 30 days: {state.sent} sent, {state.bounced} bounced,{" "}
            {state.complained} complaints.
          </p>
          <p>{state.suspended ? `Suspended: ${state.suspensionReason}.` : "Sending is allowed."}</p>
          <h3>Suspensions</h3>
          {state.suspensions.length === 0 ? (
            <p>None.</p>
          ) : (
            <table>
              <Headings names={["Since", "Until", "Why", "Bounce rate", "Complaint rate", "Lifted by"]} />
              <tbody>
                {state.suspensions.map((suspension) => (
                  <tr key={`${suspension.kind} ${suspension.suspendedAt}`}>
                    <td>{suspension.suspendedAt ? new Date(suspension.suspendedAt).toLocaleString() : "—"}</td>
                    <td>{suspension.liftedAt ? new Date(suspension.liftedAt).toLocaleString() : "still in force"}</td>
                    <td>{suspension.reason}</td>
                    <td>{guardPercent(suspension.bounceRate)}</td>
                    <td>{guardPercent(suspension.complaintRate)}</td>
                    <td>{suspension.liftedBy ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      ) : null}
    </section>
  );
}
