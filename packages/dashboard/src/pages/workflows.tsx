import { lazy, Suspense, useMemo, useState } from "react";
import { api, messageOf, orThrow } from "../api";
import { ActionButton, ActionForm, Choice, ErrorNote, Field, formatDate, Headings, Loading, Page, Select } from "../components/ui";
import type { ExecutionPosition, GraphStep } from "../components/workflow/graph";
import {
  type Draft,
  draftOf,
  emptyDraft,
  outputsOf,
  type StepType,
  stepTypes,
  summaryOf,
  toConfig,
} from "../components/workflow/step-config";
import { StepFields } from "../components/workflow/step-fields";
import { useLoad, usePoll } from "../hooks";
import { navigate } from "../router";
import type { PageProps } from "../types";

/** React Flow and dagre load with the editor only, not with the workflow list nor the dashboard's entry chunk. */
const WorkflowGraph = lazy(() => import("../components/workflow/graph"));

export default function Workflows({ route }: PageProps) {
  return route[0] ? <WorkflowEditor id={route[0]} /> : <WorkflowList />;
}

function WorkflowList() {
  const list = useLoad(async () => orThrow(await api.GET("/workflows")).data, []);
  const [name, setName] = useState("");
  const [eventName, setEventName] = useState("");
  return (
    <Page title="Workflows">
      <Loading loading={list.loading && !list.data} error={list.error} />
      <table>
        <Headings names={["Name", "Trigger", "Enabled"]} />
        <tbody>
          {list.data?.map((workflow) => (
            <tr key={workflow.id}>
              <td>
                <a href={`#/workflows/${workflow.id}`}>{workflow.name}</a>
              </td>
              <td>{workflow.triggerConfig.eventName}</td>
              <td>{workflow.enabled ? "Yes" : "No"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>New workflow</h2>
      <ActionForm
        submit="Create the workflow"
        action={async () => navigate(`/workflows/${orThrow(await api.POST("/workflows", { body: { name, eventName } })).data.id}`)}
      >
        <Field label="Name" value={name} onChange={setName} required />
        <Field label="Starts on the event" value={eventName} onChange={setEventName} required placeholder="signed_up" />
      </ActionForm>
    </Page>
  );
}

interface Step {
  id: string;
  type: string;
  name: string;
  config: Record<string, unknown>;
}

interface Transition {
  id: string;
  fromStepId: string;
  toStepId: string;
  branch: string | null;
}

const outputName = (output: string) => (output ? `Next step if ${output}` : "Next step");

/**
 * The graph editor: the steps as React Flow draws them (laid out by dagre), a form for the step chosen in the graph or
 * in the list of steps, and the executions, one of which can be shown in the graph.
 */
function WorkflowEditor(props: { id: string }) {
  const path = { id: props.id };
  const workflow = useLoad(async () => orThrow(await api.GET("/workflows/{id}", { params: { path } })).data, [props.id]);
  const templates = useLoad(async () => orThrow(await api.GET("/templates", { params: { query: { pageSize: "100" } } })).data.data, []);
  const [selected, setSelected] = useState<string>();
  const [shown, setShown] = useState<string>();
  const [graphError, setGraphError] = useState<string>();
  const position = useExecutionPosition(props.id, shown);
  // The graph lays itself out again when these change, and only then.
  const graphSteps = useMemo<GraphStep[]>(
    () =>
      ((workflow.data?.steps ?? []) as Step[]).map((step) => ({
        id: step.id,
        type: step.type,
        name: step.name,
        summary: summaryOf(step.type, step.config, templates.data?.find((template) => template.id === step.config.templateId)?.name),
      })),
    [workflow.data, templates.data],
  );
  if (!workflow.data) return <Loading loading={workflow.loading} error={workflow.error} />;
  const steps = workflow.data.steps as Step[];
  const transitions = workflow.data.transitions as Transition[];
  const step = steps.find((each) => each.id === selected);

  /** An output leads to one step: connecting it again replaces where it led. */
  const connect = async (from: { stepId: string; branch: string }, toStepId: string | undefined) => {
    const replaced = transitions.filter((each) => each.fromStepId === from.stepId && (each.branch ?? "") === from.branch);
    for (const each of replaced) {
      orThrow(
        await api.DELETE("/workflows/{id}/transitions/{transitionId}", { params: { path: { id: props.id, transitionId: each.id } } }),
      );
    }
    if (toStepId) {
      orThrow(
        await api.POST("/workflows/{id}/transitions", {
          params: { path },
          body: { fromStepId: from.stepId, toStepId, ...(from.branch ? { branch: from.branch } : {}) },
        }),
      );
    }
  };
  /** A change made in the graph: its failure shows above it, and the graph is read again either way. */
  const inGraph = (change: () => Promise<void>) => {
    setGraphError(undefined);
    change()
      .catch((failure: unknown) => setGraphError(messageOf(failure)))
      .finally(workflow.reload);
  };

  return (
    <Page
      title={workflow.data.name}
      actions={
        <ActionButton
          label={workflow.data.enabled ? "Disable" : "Enable"}
          kind={workflow.data.enabled ? "secondary" : undefined}
          action={async () => {
            orThrow(await api.PATCH("/workflows/{id}", { params: { path }, body: { enabled: !workflow.data?.enabled } }));
            workflow.reload();
          }}
        />
      }
    >
      <p>
        Starts on <code>{workflow.data.triggerConfig.eventName}</code> · {workflow.data.enabled ? "enabled" : "disabled"} ·{" "}
        {workflow.data.allowReentry ? "a contact may enter again" : "a contact enters once"}
      </p>
      <ErrorNote error={graphError} />
      <div className="workflow-editor">
        <section aria-label={`Workflow graph of ${steps.length} steps`}>
          <Suspense fallback={<Loading loading />}>
            <WorkflowGraph
              steps={graphSteps}
              transitions={transitions}
              position={position}
              onSelect={setSelected}
              onConnect={(from, toStepId) => inGraph(() => connect(from, toStepId))}
              onRemove={(ids) =>
                inGraph(async () => {
                  for (const transitionId of ids) {
                    orThrow(
                      await api.DELETE("/workflows/{id}/transitions/{transitionId}", { params: { path: { id: props.id, transitionId } } }),
                    );
                  }
                })
              }
            />
          </Suspense>
          <p className="hint">
            Drag from a step's output (at its foot) to another step to connect them; select a connection and press Delete to remove it. Or
            choose the next steps in a step's form.
          </p>
        </section>
        <div className="workflow-panel">
          <nav aria-label="Steps">
            <ul className="step-list">
              {steps.map((each) => (
                <li key={each.id}>
                  <button
                    type="button"
                    className="secondary small"
                    aria-pressed={each.id === selected}
                    onClick={() => setSelected(each.id)}
                  >
                    {each.name} ({each.type})
                  </button>
                </li>
              ))}
              <li>
                <button type="button" className="secondary small" aria-pressed={!step} onClick={() => setSelected(undefined)}>
                  Add a step
                </button>
              </li>
            </ul>
          </nav>
          {step ? (
            <StepEditor
              key={step.id}
              workflowId={props.id}
              step={step}
              steps={steps}
              transitions={transitions}
              connect={connect}
              onChanged={workflow.reload}
              onRemoved={() => {
                setSelected(undefined);
                workflow.reload();
              }}
            />
          ) : (
            <AddStep
              workflowId={props.id}
              onAdded={(id) => {
                setSelected(id);
                workflow.reload();
              }}
            />
          )}
        </div>
      </div>
      <Executions workflowId={props.id} steps={steps} shown={shown} onShow={setShown} position={position} />
    </Page>
  );
}

function AddStep(props: { workflowId: string; onAdded: (stepId: string) => void }) {
  const [type, setType] = useState<StepType>("SEND_EMAIL");
  const [name, setName] = useState("");
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  return (
    <section aria-labelledby="add-step">
      <h2 id="add-step">Add a step</h2>
      <ActionForm
        submit="Add the step"
        action={async () => {
          const added = orThrow(
            await api.POST("/workflows/{id}/steps", {
              params: { path: { id: props.workflowId } },
              body: { type, name: name || type, config: toConfig(type, draft) },
            }),
          ).data;
          setName("");
          setDraft(emptyDraft());
          props.onAdded(added.id);
        }}
      >
        <Select label="Step type" value={type} options={stepTypes} onChange={setType} />
        <Field label="Step name" value={name} onChange={setName} />
        <StepFields type={type} draft={draft} onChange={setDraft} />
      </ActionForm>
    </section>
  );
}

/** One step's form: its name and settings, where each of its outputs leads, and its removal. */
function StepEditor(props: {
  workflowId: string;
  step: Step;
  steps: Step[];
  transitions: Transition[];
  connect: (from: { stepId: string; branch: string }, toStepId: string | undefined) => Promise<void>;
  onChanged: () => void;
  onRemoved: () => void;
}) {
  const { step } = props;
  const type = step.type as StepType;
  const [name, setName] = useState(step.name);
  const [draft, setDraft] = useState(() => draftOf(step.type, step.config));
  const params = { path: { id: props.workflowId, stepId: step.id } };
  const outgoing = props.transitions.filter((each) => each.fromStepId === step.id);
  return (
    <section aria-labelledby="edit-step">
      <h2 id="edit-step">
        {step.type}: {step.name}
      </h2>
      <ActionForm
        submit="Save the step"
        action={async () => {
          orThrow(await api.PATCH("/workflows/{id}/steps/{stepId}", { params, body: { name, config: toConfig(type, draft) } }));
          props.onChanged();
        }}
      >
        <Field label="Step name" value={name} onChange={setName} required />
        <StepFields type={type} draft={draft} onChange={setDraft} />
      </ActionForm>
      {/* Read again when a connection changes in the graph. */}
      <NextSteps
        key={outgoing.map((each) => `${each.branch}:${each.toStepId}`).join()}
        step={step}
        steps={props.steps}
        outgoing={outgoing}
        connect={props.connect}
        onChanged={props.onChanged}
      />
      <ActionButton
        label="Remove the step"
        kind="danger"
        action={async () => {
          orThrow(await api.DELETE("/workflows/{id}/steps/{stepId}", { params: { ...params, query: { splice: "true" } } }));
          props.onRemoved();
        }}
      />
    </section>
  );
}

/** Where each output of the step leads: the keyboard's way to connect steps, as dragging in the graph does. */
function NextSteps(props: {
  step: Step;
  steps: Step[];
  outgoing: Transition[];
  connect: (from: { stepId: string; branch: string }, toStepId: string | undefined) => Promise<void>;
  onChanged: () => void;
}) {
  const { step } = props;
  const outputs = outputsOf(step.type);
  const leadsTo = (output: string) => props.outgoing.find((each) => (each.branch ?? "") === output)?.toStepId ?? "";
  const [next, setNext] = useState(() => Object.fromEntries(outputs.map((output) => [output, leadsTo(output)])));
  if (outputs.length === 0) return null;
  return (
    <ActionForm
      submit="Save the next steps"
      action={async () => {
        for (const output of outputs) {
          if ((next[output] ?? "") !== leadsTo(output)) await props.connect({ stepId: step.id, branch: output }, next[output] || undefined);
        }
        props.onChanged();
      }}
    >
      {outputs.map((output) => (
        <Choice
          key={output}
          label={outputName(output)}
          value={next[output] ?? ""}
          empty="None (the execution ends here)"
          options={props.steps
            .filter((each) => each.id !== step.id)
            .map((each) => ({ value: each.id, label: `${each.name} (${each.type})` }))}
          onChange={(value) => setNext({ ...next, [output]: value })}
        />
      ))}
    </ActionForm>
  );
}

interface StepRun {
  stepId: string;
  status: string;
  createdAt?: string | null;
  startedAt?: string | null;
  error?: string | null;
}

const active = (status: string | undefined) => status === "RUNNING" || status === "WAITING";

/**
 * Where the shown execution is in the graph: the step it waits at or runs (currentStepId), or once it ended the last
 * step it ran; read again while it is active.
 */
function useExecutionPosition(workflowId: string, executionId: string | undefined): (ExecutionPosition & { runs: StepRun[] }) | undefined {
  const execution = useLoad(
    async () =>
      executionId
        ? orThrow(await api.GET("/workflows/{id}/executions/{executionId}", { params: { path: { id: workflowId, executionId } } })).data
        : undefined,
    [workflowId, executionId],
  );
  usePoll(active(execution.data?.status), 3000, execution.reload);
  const shown = executionId && execution.data?.id === executionId ? execution.data : undefined;
  return useMemo(() => {
    if (!shown) return undefined;
    const runs = (shown.steps as StepRun[]).toSorted((a, b) => (a.createdAt ?? "").localeCompare(b.createdAt ?? ""));
    const at = shown.currentStepId ?? runs.at(-1)?.stepId;
    return { at, passed: new Set(runs.map((run) => run.stepId).filter((stepId) => stepId !== at)), runs };
  }, [shown]);
}

/** Executions of the workflow, newest first; one at a time is shown in the graph with its step history; active ones can be cancelled. */
function Executions(props: {
  workflowId: string;
  steps: Step[];
  shown: string | undefined;
  onShow: (id: string | undefined) => void;
  position: { runs: StepRun[] } | undefined;
}) {
  const path = { id: props.workflowId };
  const list = useLoad(
    async () => orThrow(await api.GET("/workflows/{id}/executions", { params: { path, query: { limit: "20" } } })).data,
    [props.workflowId],
  );
  usePoll(true, 3000, list.reload);
  const { position } = props;
  const nameOf = (stepId: string | null | undefined) => props.steps.find((step) => step.id === stepId)?.name ?? stepId ?? "—";
  return (
    <section aria-labelledby="executions">
      <h2 id="executions">Executions</h2>
      <ActionButton
        label="Cancel all active"
        kind="danger"
        action={async () => {
          orThrow(await api.POST("/workflows/{id}/executions/cancel-all", { params: { path } }));
          list.reload();
        }}
      />
      <table>
        <Headings names={["Started", "Contact", "Status", "At step", "Actions"]} />
        <tbody>
          {list.data?.data.map((execution) => (
            <tr key={execution.id} data-testid="execution">
              <td>{formatDate(execution.startedAt)}</td>
              <td>
                <a href={`#/contacts/${execution.contactId}`}>{execution.contactId}</a>
              </td>
              <td data-testid="execution-status">{execution.status}</td>
              <td>{execution.currentStepId ? nameOf(execution.currentStepId) : "—"}</td>
              <td>
                <button
                  type="button"
                  className="secondary small"
                  aria-pressed={props.shown === execution.id}
                  onClick={() => props.onShow(props.shown === execution.id ? undefined : execution.id)}
                >
                  Show in the graph
                </button>{" "}
                {active(execution.status) ? (
                  <ActionButton
                    label="Cancel"
                    kind="danger"
                    action={async () => {
                      orThrow(
                        await api.DELETE("/workflows/{id}/executions/{executionId}", {
                          params: { path: { id: props.workflowId, executionId: execution.id } },
                        }),
                      );
                      list.reload();
                    }}
                  />
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {position ? (
        <ol className="history" aria-label="Step history">
          {position.runs.map((run) => (
            <li key={`${run.stepId}-${run.startedAt}`}>
              {formatDate(run.startedAt)} {nameOf(run.stepId)}: {run.status}
              {run.error ? ` (${run.error})` : ""}
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
