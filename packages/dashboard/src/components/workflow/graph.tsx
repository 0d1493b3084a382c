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
  useUpdateNodeInternals,
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

/** `outputs` in the order they sit at the step's foot. */
type StepNodeData = GraphStep & { state: "current" | "passed" | ""; outputs: string[] };
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
 * A step's outputs ordered as the steps they lead to are placed, left to right (dagre knows no handles), so that its
 * connections do not cross; an output that leads nowhere keeps its place after them.
 */
function outputsLeftToRight(step: GraphStep, transitions: GraphTransition[], placed: Map<string, { x: number }>): string[] {
  const outputs = [...outputsOf(step.type)];
  const x = (output: string) => {
    const to = transitions.find((transition) => transition.fromStepId === step.id && (transition.branch ?? "") === output)?.toStepId;
    return to === undefined ? Number.POSITIVE_INFINITY : (placed.get(to)?.x ?? 0);
  };
  return outputs.toSorted((a, b) => x(a) - x(b) || outputs.indexOf(a) - outputs.indexOf(b));
}

/** Top to bottom, as dagre ranks the graph: a step below the ones that lead to it. */
function laidOut(steps: GraphStep[], transitions: GraphTransition[]): Map<string, { x: number; y: number }> {
  const graph = new Graph();
  graph.setGraph({ rankdir: "TB", nodesep: 40, ranksep: 70 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const step of steps) graph.setNode(step.id, { width: nodeWidth, height: nodeHeight });
  for (const transition of transitions) graph.setEdge(transition.fromStepId, transition.toStepId);
  layout(graph);
  // dagre places a node by its centre, React Flow by its top-left corner.
  return new Map(
    steps.map((step) => {
      const { x = 0, y = 0 } = graph.node(step.id) ?? {};
      return [step.id, { x: x - nodeWidth / 2, y: y - nodeHeight / 2 }];
    }),
  );
}

function StepBox({ id, data }: NodeProps<StepNode>) {
  const { outputs } = data;
  const updateNodeInternals = useUpdateNodeInternals();
  const order = outputs.join();
  // Outputs that change places move their handles: React Flow measures them again.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the order is what moves them.
  useEffect(() => updateNodeInternals(id), [id, order, updateNodeInternals]);
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
  const { fitBounds } = useReactFlow();
  // A step added or a connection changed moves the others: the whole graph is brought into view again, from the
  // layout's own sizes (fitView would wait for React Flow to measure the new steps).
  useEffect(() => {
    if (placed.size === 0) return;
    const corners = [...placed.values()];
    const x = Math.min(...corners.map((corner) => corner.x));
    const y = Math.min(...corners.map((corner) => corner.y));
    const width = Math.max(...corners.map((corner) => corner.x)) + nodeWidth - x;
    // Below the lowest steps, their outputs' labels.
    const height = Math.max(...corners.map((corner) => corner.y)) + nodeHeight + 24 - y;
    void fitBounds({ x, y, width, height }, { padding: fitting.padding });
  }, [placed, fitBounds]);
  const [nodes, setNodes, onNodesChange] = useNodesState<StepNode>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([]);
  useEffect(() => {
    setNodes(
      steps.map((step) => ({
        id: step.id,
        type: "step",
        position: placed.get(step.id) ?? { x: 0, y: 0 },
        data: {
          ...step,
          state: position?.at === step.id ? "current" : position?.passed.has(step.id) ? "passed" : "",
          outputs: outputsLeftToRight(step, transitions, placed),
        },
        deletable: false,
        ariaLabel: `${step.type} step ${step.name}`,
      })),
    );
  }, [steps, transitions, placed, position, setNodes]);
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
        maxZoom={1.5}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}

const nameOf = (steps: GraphStep[], id: string) => steps.find((step) => step.id === id)?.name ?? id;
