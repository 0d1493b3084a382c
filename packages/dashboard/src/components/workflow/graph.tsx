import { Graph, layout } from "@dagrejs/dagre";
import {
  Background,
  type Connection,
  Controls,
  type Edge,
  Handle,
  MarkerType,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  ReactFlowProvider,
  useEdgesState,
  useNodesState,
  useReactFlow,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { useEffect, useMemo } from "react";
import { outputsOf } from "./step-config";

/** A type, not an interface: React Flow wants its nodes' data indexable. */
export type GraphStep = {
  id: string;
  type: string;
  name: string;
  summary: string;
};

export interface GraphTransition {
  id: string;
  fromStepId: string;
  toStepId: string;
  branch: string | null;
}

/** Where an execution is: the step it is at (or ended on), and the steps it went through. */
export interface ExecutionPosition {
  at: string | undefined;
  passed: ReadonlySet<string>;
}

type StepNodeData = GraphStep & { state: "current" | "passed" | "" };
type StepNode = Node<StepNodeData, "step">;

const nodeWidth = 220;
const nodeHeight = 76;
/** The handle of a step's unnamed output: a transition without a branch. */
const plainOutput = "next";

/** Whether an execution went from one end of the transition to the other (both ends are steps it ran). */
const wentAlong = (position: ExecutionPosition | undefined, transition: GraphTransition) =>
  position !== undefined &&
  [transition.fromStepId, transition.toStepId].every((stepId) => stepId === position.at || position.passed.has(stepId));

/**
 * The steps from the entry on, each step's outputs in their order (yes before no): dagre orders the nodes of a rank as
 * it first meets them, so that a step's left output leads to the step on the left, and the edges do not cross.
 */
function inReadingOrder(steps: GraphStep[], transitions: GraphTransition[]): GraphStep[] {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const targets = new Set(transitions.map((transition) => transition.toStepId));
  const queue = steps.filter((step) => !targets.has(step.id));
  const seen = new Set<string>();
  const ordered: GraphStep[] = [];
  for (let step = queue.shift(); step; step = queue.shift()) {
    if (seen.has(step.id)) continue;
    seen.add(step.id);
    ordered.push(step);
    const outputs = outputsOf(step.type);
    const next = transitions
      .filter((transition) => transition.fromStepId === step?.id)
      .toSorted((a, b) => outputs.indexOf(a.branch ?? "") - outputs.indexOf(b.branch ?? ""));
    for (const transition of next) {
      const to = byId.get(transition.toStepId);
      if (to) queue.push(to);
    }
  }
  return [...ordered, ...steps.filter((step) => !seen.has(step.id))];
}

/** Top to bottom, as dagre ranks the graph: a step below the ones that lead to it. */
function laidOut(steps: GraphStep[], transitions: GraphTransition[]): Map<string, { x: number; y: number }> {
  const graph = new Graph();
  graph.setGraph({ rankdir: "TB", nodesep: 40, ranksep: 70 });
  graph.setDefaultEdgeLabel(() => ({}));
  const ordered = inReadingOrder(steps, transitions);
  const rank = new Map(ordered.map((step, index) => [step.id, index]));
  for (const step of ordered) graph.setNode(step.id, { width: nodeWidth, height: nodeHeight });
  for (const transition of transitions.toSorted((a, b) => (rank.get(a.toStepId) ?? 0) - (rank.get(b.toStepId) ?? 0))) {
    graph.setEdge(transition.fromStepId, transition.toStepId);
  }
  layout(graph);
  // dagre places a node by its centre, React Flow by its top-left corner.
  return new Map(
    steps.map((step) => {
      const { x = 0, y = 0 } = graph.node(step.id) ?? {};
      return [step.id, { x: x - nodeWidth / 2, y: y - nodeHeight / 2 }];
    }),
  );
}

function StepBox({ data }: NodeProps<StepNode>) {
  const outputs = outputsOf(data.type);
  return (
    <div className="workflow-step" data-state={data.state || undefined} data-testid="workflow-step">
      <Handle type="target" position={Position.Top} />
      <span className="step-type">{data.type}</span>
      <strong>{data.name}</strong>
      <span className="step-summary">{data.summary}</span>
      {data.state === "current" ? (
        <span className="step-state">Here</span>
      ) : data.state === "passed" ? (
        <span className="step-state">Passed</span>
      ) : null}
      {outputs.map((output, index) => {
        const left = `${((index + 1) / (outputs.length + 1)) * 100}%`;
        return (
          <div key={output || plainOutput}>
            <Handle type="source" position={Position.Bottom} id={output || plainOutput} style={{ left }} />
            {output ? (
              <span className="output-label" style={{ left }}>
                {output}
              </span>
            ) : null}
          </div>
        );
      })}
    </div>
  );
}

const nodeTypes = { step: StepBox };
const fitting = { padding: 0.15, maxZoom: 1 };

interface GraphProps {
  steps: GraphStep[];
  transitions: GraphTransition[];
  position?: ExecutionPosition;
  onSelect: (stepId: string) => void;
  onConnect: (from: { stepId: string; branch: string }, toStepId: string) => void;
  onRemove: (transitionIds: string[]) => void;
}

/**
 * The workflow's graph, laid out by dagre, with pan and zoom: drag from a step's output (its branch) to another step
 * to connect them; select a connection and press Delete (or Backspace) to remove it. Loaded only with the editor.
 */
export default function WorkflowGraph(props: GraphProps) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}

function Canvas(props: GraphProps) {
  const { steps, transitions, position } = props;
  const placed = useMemo(() => laidOut(steps, transitions), [steps, transitions]);
  const { fitView } = useReactFlow();
  // A step added or a connection changed moves the others: the whole graph is brought into view again.
  useEffect(() => {
    if (placed.size > 0) void fitView(fitting);
  }, [placed, fitView]);
  const [nodes, setNodes, onNodesChange] = useNodesState<StepNode>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([]);
  useEffect(() => {
    setNodes(
      steps.map((step) => ({
        id: step.id,
        type: "step",
        position: placed.get(step.id) ?? { x: 0, y: 0 },
        data: { ...step, state: position?.at === step.id ? "current" : position?.passed.has(step.id) ? "passed" : "" },
        deletable: false,
        ariaLabel: `${step.type} step ${step.name}`,
      })),
    );
  }, [steps, placed, position, setNodes]);
  useEffect(() => {
    setEdges(
      transitions.map((transition) => ({
        id: transition.id,
        source: transition.fromStepId,
        target: transition.toStepId,
        sourceHandle: transition.branch || plainOutput,
        label: transition.branch || undefined,
        markerEnd: { type: MarkerType.ArrowClosed },
        className: wentAlong(position, transition) ? "passed" : undefined,
        ariaLabel: `From ${nameOf(steps, transition.fromStepId)}${transition.branch ? ` (${transition.branch})` : ""} to ${nameOf(steps, transition.toStepId)}`,
      })),
    );
  }, [steps, transitions, position, setEdges]);
  return (
    <div className="workflow-graph">
      <ReactFlow<StepNode, Edge>
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onNodeClick={(_, node) => props.onSelect(node.id)}
        onConnect={(connection: Connection) =>
          props.onConnect(
            { stepId: connection.source, branch: connection.sourceHandle === plainOutput ? "" : (connection.sourceHandle ?? "") },
            connection.target,
          )
        }
        isValidConnection={(connection) => connection.source !== connection.target}
        onEdgesDelete={(deleted) => props.onRemove(deleted.map((edge) => edge.id))}
        deleteKeyCode={["Delete", "Backspace"]}
        nodesDraggable={false}
        fitView
        fitViewOptions={fitting}
        minZoom={0.3}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}

const nameOf = (steps: GraphStep[], id: string) => steps.find((step) => step.id === id)?.name ?? id;
