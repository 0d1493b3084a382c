import { type PointerEvent, useState } from "react";
import { api, orThrow } from "../api";
import { ActionButton, ActionForm, Choice, Field, formatDate, Headings, Loading, Page, Select } from "../components/ui";
import { useLoad, usePoll } from "../hooks";
import { navigate } from "../router";
import type { PageProps } from "../types";
import { parseObject } from "./contacts";

const stepTypes = ["SEND_EMAIL", "DELAY", "WAIT_FOR_EVENT", "CONDITION", "WEBHOOK", "UPDATE_CONTACT", "EXIT"] as const;
type StepType = (typeof stepTypes)[number];

/** A starting config per step type, edited as JSON; the API checks it and names the bad field. */
const configTemplates: Record<StepType, object> = {
  SEND_EMAIL: { subject: "Welcome, {{ data.firstName | default: 'friend' }}", body: "<p>Hello!</p>", from: "hello@example.com" },
  DELAY: { amount: 1, unit: "days" },
  WAIT_FOR_EVENT: { eventName: "purchase", timeout: 86400 },
  CONDITION: { condition: { logic: "AND", groups: [{ filters: [{ field: "data.plan", operator: "equals", value: "pro" }] }] } },
  WEBHOOK: { url: "https://example.com/hook", method: "POST", body: { contact: "{{ email }}" } },
  UPDATE_CONTACT: { data: { onboarded: true } },
  EXIT: { reason: "done" },
};
/** Three steps to a row, in the order they were added. */
const gridPosition = (index: number) => ({ x: 40 + (index % 3) * 220, y: 40 + Math.floor(index / 3) * 120 });

/** A step's box is 160 × 50: an edge leaves by the side facing the next step, and enters by the opposite one. */
function edgeBetween(from: { x: number; y: number }, to: { x: number; y: number }): [number, number, number, number] {
  if (to.x >= from.x + 160) return [from.x + 160, from.y + 25, to.x, to.y + 25];
  if (to.x + 160 <= from.x) return [from.x, from.y + 25, to.x + 160, to.y + 25];
  return to.y >= from.y ? [from.x + 80, from.y + 50, to.x + 80, to.y] : [from.x + 80, from.y, to.x + 80, to.y + 50];
}

const branchesOf: Partial<Record<StepType, string[]>> = { CONDITION: ["yes", "no"], WAIT_FOR_EVENT: ["event", "timeout"] };

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
  position?: { x?: number; y?: number } | Record<string, unknown>;
}

/** The graph editor: steps placed on a canvas (drag to move), transitions drawn between them with their branch. */
function WorkflowEditor(props: { id: string }) {
  const path = { id: props.id };
  const workflow = useLoad(async () => orThrow(await api.GET("/workflows/{id}", { params: { path } })).data, [props.id]);
  const [dragging, setDragging] = useState<{ id: string; dx: number; dy: number; x: number; y: number }>();
  if (!workflow.data) return <Loading loading={workflow.loading} error={workflow.error} />;
  const { steps, transitions } = workflow.data;
  const at = (step: Step, index: number) => {
    if (dragging?.id === step.id) return { x: dragging.x, y: dragging.y };
    const { x, y } = (step.position ?? {}) as { x?: number; y?: number };
    // A step added by a script may have no place: it gets the grid's.
    return x || y ? { x: x ?? 0, y: y ?? 0 } : gridPosition(index);
  };
  const positions = new Map(steps.map((step, index) => [step.id, at(step, index)]));
  const onPointerMove = (event: PointerEvent<SVGSVGElement>) => {
    if (!dragging) return;
    const box = event.currentTarget.getBoundingClientRect();
    setDragging({
      ...dragging,
      x: Math.max(0, event.clientX - box.left - dragging.dx),
      y: Math.max(0, event.clientY - box.top - dragging.dy),
    });
  };
  const onPointerUp = async () => {
    if (!dragging) return;
    const moved = dragging;
    setDragging(undefined);
    await api.PATCH("/workflows/{id}/steps/{stepId}", {
      params: { path: { id: props.id, stepId: moved.id } },
      body: { position: { x: Math.round(moved.x), y: Math.round(moved.y) } } as never,
    });
    workflow.reload();
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
      <svg
        className="canvas"
        viewBox="0 0 720 420"
        role="img"
        aria-label={`Workflow graph of ${steps.length} steps`}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" fill="#555" />
          </marker>
        </defs>
        {transitions.map((transition) => {
          const from = positions.get(transition.fromStepId);
          const to = positions.get(transition.toStepId);
          if (!from || !to) return null;
          const [x1, y1, x2, y2] = edgeBetween(from, to);
          return (
            <g key={transition.id}>
              <line x1={x1} y1={y1} x2={x2} y2={y2} stroke="#555" markerEnd="url(#arrow)" />
              {transition.branch ? (
                <text x={(x1 + x2) / 2 + 4} y={(y1 + y2) / 2 - 4} fontSize="12">
                  {transition.branch}
                </text>
              ) : null}
            </g>
          );
        })}
        {steps.map((step) => {
          const { x, y } = positions.get(step.id) ?? { x: 0, y: 0 };
          return (
            <g
              key={step.id}
              transform={`translate(${x},${y})`}
              className="step"
              onPointerDown={(event) => {
                const box = (event.currentTarget.ownerSVGElement as SVGSVGElement).getBoundingClientRect();
                setDragging({ id: step.id, dx: event.clientX - box.left - x, dy: event.clientY - box.top - y, x, y });
              }}
            >
              <rect width="160" height="50" rx="6" />
              <text x="8" y="20" fontSize="12" fontWeight="bold">
                {step.type}
              </text>
              <text x="8" y="38" fontSize="12">
                {step.name}
              </text>
            </g>
          );
        })}
      </svg>
      <div className="split">
        <AddStep workflowId={props.id} position={gridPosition(steps.length)} onAdded={workflow.reload} />
        <Connect workflowId={props.id} steps={steps} onAdded={workflow.reload} />
      </div>
      <h2>Steps</h2>
      <ul className="steps">
        {steps.map((step) => (
          <li key={step.id}>
            <strong>{step.name}</strong> ({step.type}) <code>{JSON.stringify(step.config)}</code>{" "}
            <ActionButton
              label="Remove"
              kind="danger"
              action={async () => {
                orThrow(
                  await api.DELETE("/workflows/{id}/steps/{stepId}", {
                    params: { path: { id: props.id, stepId: step.id }, query: { splice: "true" } },
                  }),
                );
                workflow.reload();
              }}
            />
          </li>
        ))}
      </ul>
      <Executions workflowId={props.id} />
    </Page>
  );
}

function AddStep(props: { workflowId: string; position: { x: number; y: number }; onAdded: () => void }) {
  const [type, setType] = useState<StepType>("SEND_EMAIL");
  const [name, setName] = useState("");
  const [config, setConfig] = useState(JSON.stringify(configTemplates.SEND_EMAIL, null, 2));
  return (
    <section aria-labelledby="add-step">
      <h2 id="add-step">Add a step</h2>
      <ActionForm
        submit="Add the step"
        action={async () => {
          orThrow(
            await api.POST("/workflows/{id}/steps", {
              params: { path: { id: props.workflowId } },
              body: { type, name: name || type, config: parseObject(config), position: props.position } as never,
            }),
          );
          setName("");
          props.onAdded();
        }}
      >
        <Select
          label="Step type"
          value={type}
          options={stepTypes}
          onChange={(value) => {
            setType(value);
            setConfig(JSON.stringify(configTemplates[value], null, 2));
          }}
        />
        <Field label="Step name" value={name} onChange={setName} />
        <Field label="Config (JSON)" value={config} onChange={setConfig} multiline rows={6} />
      </ActionForm>
    </section>
  );
}

function Connect(props: { workflowId: string; steps: Step[]; onAdded: () => void }) {
  const [fromStepId, setFrom] = useState("");
  const [toStepId, setTo] = useState("");
  const [branch, setBranch] = useState("");
  const from = props.steps.find((step) => step.id === fromStepId);
  const branches = from ? branchesOf[from.type as StepType] : undefined;
  const choose = (label: string, value: string, onChange: (value: string) => void) => (
    <Choice
      label={label}
      value={value}
      empty="Choose a step"
      required
      options={props.steps.map((step) => ({ value: step.id, label: `${step.name} (${step.type})` }))}
      onChange={onChange}
    />
  );
  return (
    <section aria-labelledby="connect">
      <h2 id="connect">Connect two steps</h2>
      <ActionForm
        submit="Connect"
        action={async () => {
          orThrow(
            await api.POST("/workflows/{id}/transitions", {
              params: { path: { id: props.workflowId } },
              body: { fromStepId, toStepId, ...(branches ? { branch: branch || branches[0] } : {}) },
            }),
          );
          props.onAdded();
        }}
      >
        {choose("From", fromStepId, setFrom)}
        {choose("To", toStepId, setTo)}
        {branches ? <Select label="Branch" value={branch || branches[0] || ""} options={branches} onChange={setBranch} /> : null}
      </ActionForm>
    </section>
  );
}

/** Executions of the workflow, newest first, each with its step history; active ones can be cancelled. */
function Executions(props: { workflowId: string }) {
  const path = { id: props.workflowId };
  const list = useLoad(
    async () => orThrow(await api.GET("/workflows/{id}/executions", { params: { path, query: { limit: "20" } } })).data,
    [props.workflowId],
  );
  usePoll(true, 3000, list.reload);
  const [open, setOpen] = useState<string>();
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
        <Headings names={["Started", "Contact", "Status", "Actions"]} />
        <tbody>
          {(list.data?.data as { id: string; contactId: string; status: string; startedAt?: string }[] | undefined)?.map((execution) => (
            <tr key={execution.id}>
              <td>{formatDate(execution.startedAt)}</td>
              <td>
                <a href={`#/contacts/${execution.contactId}`}>{execution.contactId}</a>
              </td>
              <td data-testid="execution-status">{execution.status}</td>
              <td>
                <button type="button" className="secondary small" onClick={() => setOpen(open === execution.id ? undefined : execution.id)}>
                  History
                </button>{" "}
                {["RUNNING", "WAITING"].includes(execution.status) ? (
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
      {open ? <History workflowId={props.workflowId} executionId={open} /> : null}
    </section>
  );
}

function History(props: { workflowId: string; executionId: string }) {
  const execution = useLoad(
    async () =>
      orThrow(
        await api.GET("/workflows/{id}/executions/{executionId}", {
          params: { path: { id: props.workflowId, executionId: props.executionId } },
        }),
      ).data,
    [props.executionId],
  );
  if (!execution.data) return <Loading loading={execution.loading} error={execution.error} />;
  return (
    <ol className="history" aria-label="Step history">
      {(execution.data.steps as { stepId: string; status: string; startedAt?: string; error?: string | null }[]).map((step) => (
        <li key={`${step.stepId}-${step.startedAt}`}>
          {formatDate(step.startedAt)} {step.stepId}: {step.status}
          {step.error ? ` (${step.error})` : ""}
        </li>
      ))}
    </ol>
  );
}
