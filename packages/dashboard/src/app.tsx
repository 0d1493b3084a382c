import { type ComponentType, lazy, Suspense, useEffect, useState } from "react";
import { api, orThrow, rememberedProject, setCurrentProject } from "./api";
import { ReputationBanner } from "./components/reputation";
import { ActionForm, Field, Loading } from "./components/ui";
import { useLoad } from "./hooks";
import { AuthScreen } from "./pages/auth";
import { navigate, useRoute } from "./router";
import type { PageProps } from "./types";

const pageLoaders = {
  overview: () => import("./pages/overview"),
  contacts: () => import("./pages/contacts"),
  templates: () => import("./pages/templates"),
  segments: () => import("./pages/segments"),
  campaigns: () => import("./pages/campaigns"),
  workflows: () => import("./pages/workflows"),
  domains: () => import("./pages/domains"),
  activity: () => import("./pages/activity"),
  webhooks: () => import("./pages/webhooks"),
  settings: () => import("./pages/settings"),
};
type PageName = keyof typeof pageLoaders;
type PageComponent = ComponentType<PageProps>;

/** The pages whose code has arrived, as their components. */
const loadedPages: Partial<Record<PageName, PageComponent>> = {};
const loadPage = (name: PageName) =>
  pageLoaders[name]().then((module) => {
    loadedPages[name] = module.default as PageComponent;
    return { default: module.default as PageComponent };
  });

/**
 * Each page's component, chosen once: the page itself when its code has arrived by then (the first page, fetched with
 * the entry), else a lazy one. A lazy page suspends on its first render even when its code is there, and React holds a
 * suspended boundary's content back for 300 ms (its fallback throttle): the first screen would wait for that.
 */
const pageComponents: Partial<Record<PageName, PageComponent>> = {};
const pageComponent = (name: PageName): PageComponent => {
  pageComponents[name] ??= loadedPages[name] ?? lazy(() => loadPage(name));
  return pageComponents[name];
};

// The first screen needs the user, the projects and its page's code: all three start with the page, not one after another.
const firstPage = window.location.hash.replace(/^#\/?/, "").split(/[/?]/)[0] as PageName;
void loadPage(firstPage in pageLoaders ? firstPage : "overview");
let earlyUser: ReturnType<typeof fetchUser> | undefined = fetchUser();
let earlyProjects: ReturnType<typeof fetchProjects> | undefined = fetchProjects();

function fetchUser() {
  return api.GET("/users/@me");
}
function fetchProjects() {
  return api.GET("/users/@me/projects");
}
const navigation: [PageName, string][] = [
  ["overview", "Overview"],
  ["contacts", "Contacts"],
  ["templates", "Templates"],
  ["segments", "Segments"],
  ["campaigns", "Campaigns"],
  ["workflows", "Workflows"],
  ["domains", "Domains"],
  ["activity", "Activity"],
  ["webhooks", "Webhooks"],
  ["settings", "Settings"],
];
const authRoutes = new Set(["login", "signup", "forgot", "reset-password", "verify-email"]);

export function App() {
  const route = useRoute();
  const [session, setSession] = useState(0);
  const me = useLoad(async () => {
    // The first answer was asked for with the page; after a sign-in or out, ask again.
    const early = earlyUser;
    earlyUser = undefined;
    const answer = await (early ?? fetchUser());
    return answer.response.ok ? answer.data : null;
  }, [session]);
  const first = route[0] ?? "overview";

  if (me.loading && me.data === undefined) return <Loading loading />;
  if (authRoutes.has(first) && (first !== "login" || !me.data)) {
    return (
      <AuthScreen
        mode={first}
        onSignedIn={() => {
          navigate("/overview");
          setSession((value) => value + 1);
        }}
      />
    );
  }
  if (!me.data) return <AuthScreen mode="login" onSignedIn={() => setSession((value) => value + 1)} />;
  return <Workspace user={me.data} route={route} onSignedOut={() => setSession((value) => value + 1)} />;
}

interface User {
  email: string;
  name?: string;
  emailVerified?: boolean;
}

function Workspace(props: { user: User; route: string[]; onSignedOut: () => void }) {
  const projects = useLoad(async () => {
    // Signed out when the page started, the early answer was a 401: ask again now.
    const early = await earlyProjects;
    earlyProjects = undefined;
    return orThrow(early?.response.ok ? early : await fetchProjects()).data;
  }, []);
  const [projectId, setProjectId] = useState<string>();
  useEffect(() => {
    const list = projects.data ?? [];
    const chosen = list.find((project) => project.id === (projectId ?? rememberedProject())) ?? list[0];
    if (chosen && chosen.id !== projectId) setProjectId(chosen.id);
  }, [projects.data, projectId]);
  setCurrentProject(projectId);

  const name = (props.route[0] ?? "overview") as PageName;
  const Current = pageComponent(name in pageLoaders ? name : "overview");
  const project = projects.data?.find((candidate) => candidate.id === projectId);

  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <nav className="sidebar" aria-label="Main">
        <p className="brand">Herald</p>
        {projects.data && projects.data.length > 0 ? (
          <label className="project-switch">
            Project
            <select value={projectId ?? ""} onChange={(event) => setProjectId(event.target.value)}>
              {projects.data.map((candidate) => (
                <option key={candidate.id} value={candidate.id}>
                  {candidate.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <ul>
          {navigation.map(([page, label]) => (
            <li key={page}>
              <a href={`#/${page}`} aria-current={page === name ? "page" : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
        <p className="who">{props.user.email}</p>
        <button
          type="button"
          className="secondary"
          onClick={async () => {
            await api.GET("/auth/logout");
            setCurrentProject(undefined);
            navigate("/login");
            props.onSignedOut();
          }}
        >
          Log out
        </button>
      </nav>
      <main id="main" tabIndex={-1}>
        {props.user.emailVerified === false ? (
          <p className="banner" role="status">
            Your address is not verified yet: follow the link in the email we sent.{" "}
            <button
              type="button"
              className="secondary small"
              onClick={() => void api.POST("/auth/request-verification", { body: { email: props.user.email } })}
            >
              Send it again
            </button>
          </p>
        ) : null}
        {project ? <ReputationBanner key={project.id} projectId={project.id} /> : null}
        <Loading loading={projects.loading && !projects.data} error={projects.error} />
        {projects.data && projects.data.length === 0 ? <FirstProject onCreated={projects.reload} /> : null}
        {project ? (
          <Suspense fallback={<Loading loading />}>
            <Current key={project.id} project={project} user={props.user} route={props.route.slice(1)} reloadProjects={projects.reload} />
          </Suspense>
        ) : null}
      </main>
    </div>
  );
}

function FirstProject(props: { onCreated: () => void }) {
  const [name, setName] = useState("");
  return (
    <section className="page">
      <h1>Create your first project</h1>
      <ActionForm
        submit="Create the project"
        action={async () => {
          orThrow(await api.POST("/users/@me/projects", { body: { name } }));
          props.onCreated();
        }}
      >
        <Field label="Project name" value={name} onChange={setName} required />
      </ActionForm>
    </section>
  );
}
