import { api, orThrow } from "../api";
import { CopyButton, Loading, Page } from "../components/ui";
import { useLoad } from "../hooks";
import type { PageProps } from "../types";

/** The project's onboarding checklist (GET /projects/:id/setup-state) and its keys. */
export default function Overview({ project }: PageProps) {
  const setup = useLoad(
    async () => orThrow(await api.GET("/projects/{id}/setup-state", { params: { path: { id: project.id } } })).data,
    [project.id],
  );
  const domains = useLoad(
    async () => orThrow(await api.GET("/domains/project/{projectId}", { params: { path: { projectId: project.id } } })).data,
    [project.id],
  );
  const steps: [string, boolean | undefined, string][] = [
    ["Create a project", setup.data?.projectCreated, "#/settings"],
    ["Add and verify a sending domain", domains.data?.some((domain) => domain.verified), "#/domains"],
    ["Use an API key", setup.data?.apiKeyUsed, "#/settings"],
    ["Send an email", setup.data?.emailSent, "#/templates"],
    ["Invite a teammate", setup.data?.memberInvited, "#/settings"],
  ];
  return (
    <Page title={project.name}>
      <Loading loading={setup.loading && !setup.data} error={setup.error} />
      <h2>Getting started</h2>
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
