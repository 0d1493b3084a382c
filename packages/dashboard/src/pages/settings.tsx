import { useState } from "react";
import { api, orThrow, setCurrentProject } from "../api";
import { ReputationSection } from "../components/reputation";
import { ActionButton, ActionForm, CopyButton, Field, Headings, Loading, Page, Select, TypedConfirm } from "../components/ui";
import { useLoad } from "../hooks";
import type { PageProps } from "../types";

const roles = ["ADMIN", "MEMBER", "VIEWER"] as const;
const categories = ["transactional", "campaigns", "workflows", "inbound"] as const;

/** The project: name, keys, members and roles, billing, a new project, and reset or delete. */
export default function Settings({ project, reloadProjects }: PageProps) {
  const path = { id: project.id };
  const [name, setName] = useState(project.name);
  const [secret, setSecret] = useState<string>();
  const [newProject, setNewProject] = useState("");
  return (
    <Page title="Settings">
      <h2>Project</h2>
      <ActionForm
        className="form inline"
        submit="Rename"
        action={async () => {
          orThrow(await api.PATCH("/users/@me/projects/{id}", { params: { path }, body: { name } }));
          reloadProjects();
        }}
      >
        <Field label="Name" value={name} onChange={setName} required />
      </ActionForm>
      <h2>API keys</h2>
      <p>
        Public key <code>{project.publicKey}</code> <CopyButton value={project.publicKey} label="Copy the public key" />
      </p>
      <p>Secret key {project.secretKeyHint}</p>
      {secret ? (
        <p className="banner" role="status">
          The new secret key, shown once: <code data-testid="secret-key">{secret}</code>{" "}
          <CopyButton value={secret} label="Copy the secret key" />
        </p>
      ) : null}
      <TypedConfirm
        label="Rotate both keys"
        phrase={project.name}
        action={async () => {
          setSecret(orThrow(await api.POST("/users/@me/projects/{id}/regenerate-keys", { params: { path } })).data.secretKey);
          reloadProjects();
        }}
      />
      <Members projectId={project.id} />
      <Billing projectId={project.id} />
      <ReputationSection projectId={project.id} />
      <h2>Another project</h2>
      <ActionForm
        className="form inline"
        submit="Create"
        action={async () => {
          const created = orThrow(await api.POST("/users/@me/projects", { body: { name: newProject } })).data;
          setCurrentProject(created.id);
          setNewProject("");
          reloadProjects();
        }}
      >
        <Field label="New project name" value={newProject} onChange={setNewProject} required />
      </ActionForm>
      <h2>Danger zone</h2>
      <div className="toolbar">
        <TypedConfirm
          label="Reset the project's data"
          phrase={project.name}
          action={async () => void orThrow(await api.POST("/users/@me/projects/{id}/reset", { params: { path } }))}
        />
        <TypedConfirm
          label="Delete the project"
          phrase={project.name}
          action={async () => {
            orThrow(await api.DELETE("/users/@me/projects/{id}", { params: { path } }));
            setCurrentProject(undefined);
            reloadProjects();
          }}
        />
      </div>
    </Page>
  );
}

function Members(props: { projectId: string }) {
  const path = { id: props.projectId };
  const list = useLoad(async () => orThrow(await api.GET("/projects/{id}/members", { params: { path } })).data, [props.projectId]);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<(typeof roles)[number]>("MEMBER");
  return (
    <section aria-labelledby="members">
      <h2 id="members">Members</h2>
      <Loading loading={list.loading && !list.data} error={list.error} />
      <ul>
        {list.data?.map((member) => (
          <li key={member.userId}>
            {member.email} · {String(member.role)} {member.active ? "" : "(invited, not yet verified)"}{" "}
            <ActionButton
              label="Remove"
              kind="danger"
              action={async () => {
                orThrow(
                  await api.DELETE("/projects/{id}/members/{userId}", { params: { path: { id: props.projectId, userId: member.userId } } }),
                );
                list.reload();
              }}
            />
          </li>
        ))}
      </ul>
      <ActionForm
        className="form inline"
        submit="Invite"
        action={async () => {
          orThrow(await api.POST("/projects/{id}/members", { params: { path }, body: { email, role } as never }));
          setEmail("");
          list.reload();
        }}
      >
        <Field label="Email" type="email" value={email} onChange={setEmail} required />
        <Select label="Role" value={role} options={roles} onChange={setRole} />
      </ActionForm>
    </section>
  );
}

function Billing(props: { projectId: string }) {
  const path = { id: props.projectId };
  const consumption = useLoad(
    async () => orThrow(await api.GET("/users/@me/projects/{id}/billing-consumption", { params: { path } })).data,
    [props.projectId],
  );
  const [limits, setLimits] = useState<Record<string, string>>({});
  return (
    <section aria-labelledby="billing">
      <h2 id="billing">Billing</h2>
      {consumption.data ? (
        <table>
          <Headings names={["Category", "This period", "Cap"]} />
          <tbody>
            {categories.map((category) => (
              <tr key={category}>
                <td>{category}</td>
                <td>{String((consumption.data?.consumption as Record<string, unknown> | undefined)?.[category] ?? 0)}</td>
                <td>{String((consumption.data?.limits as Record<string, unknown> | undefined)?.[category] ?? "none")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Loading loading={consumption.loading} error={consumption.error} />
      )}
      <ActionForm
        className="form inline"
        submit="Save the caps"
        action={async () => {
          const body = Object.fromEntries(categories.map((category) => [category, limits[category] ? Number(limits[category]) : null]));
          orThrow(await api.PUT("/users/@me/projects/{id}/billing-limits", { params: { path }, body: body as never }));
          consumption.reload();
        }}
      >
        {categories.map((category) => (
          <Field
            key={category}
            label={`${category} cap (empty: none)`}
            type="number"
            value={limits[category] ?? ""}
            onChange={(value) => setLimits({ ...limits, [category]: value })}
          />
        ))}
      </ActionForm>
    </section>
  );
}
