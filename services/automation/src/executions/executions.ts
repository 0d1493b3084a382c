import type { Client } from "@connectrpc/connect";
import { DomainError, notFound, validationFailed } from "@herald/errors";
import type { ContactsService } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import type { Db, Tx } from "../db/client.js";
import { graphProblem } from "../domain/graph.js";
import { isId } from "../domain/ids.js";
import type { JsonObject } from "../domain/step-config.js";
import { activeStatuses, isExecutionStatus } from "../domain/step-types.js";
import { startExecution } from "../engine/start-execution.js";

export type ExecutionRow = NonNullable<Awaited<ReturnType<Db["workflowExecution"]["findFirst"]>>>;
export type StepRunRow = NonNullable<Awaited<ReturnType<Db["workflowStepRun"]["findFirst"]>>>;

/** Executions per message of a contact's export. */
const exportPage = { fallback: 100, max: 500 };

const maxPage = 100;

/** Cancels, in the caller's transaction, active executions and their queued or waiting step runs. */
async function cancelIn(tx: Tx, where: { projectId: string; workflowId: string; id?: string }): Promise<number> {
  const executions = await tx.workflowExecution.findMany({
    where: { ...where, status: { in: [...activeStatuses] } },
    select: { id: true },
  });
  const ids = executions.map((execution) => execution.id);
  if (ids.length === 0) return 0;
  const now = new Date();
  await tx.workflowExecution.updateMany({
    where: { projectId: where.projectId, id: { in: ids }, status: { in: [...activeStatuses] } },
    data: { status: "CANCELLED", reason: "Cancelled", finishedAt: now },
  });
  // A RUNNING step finishes what it started; the runner sees the execution cancelled and goes no further.
  await tx.workflowStepRun.updateMany({
    where: { projectId: where.projectId, executionId: { in: ids }, status: { in: ["PENDING", "WAITING"] } },
    data: { status: "CANCELLED", finishedAt: now, waitingFor: null },
  });
  return ids.length;
}

/** Executions through the API: manual starts, lists, one with its history, cancellation. */
export function createExecutions(deps: { db: Db; contacts: Client<typeof ContactsService>; nudgeRunner: () => void }) {
  const { db, contacts } = deps;

  async function workflowOf(projectId: string, workflowId: string) {
    const workflow = isId(workflowId)
      ? await db.workflow.findFirst({ where: { id: workflowId, projectId }, include: { steps: true, transitions: true } })
      : null;
    if (!workflow) throw notFound("Workflow");
    return workflow;
  }

  async function execution(projectId: string, workflowId: string, executionId: string) {
    await workflowOf(projectId, workflowId);
    const found = isId(executionId)
      ? await db.workflowExecution.findFirst({
          where: { id: executionId, workflowId, projectId },
          include: { steps: { orderBy: { createdAt: "asc" } } },
        })
      : null;
    if (!found) throw notFound("Execution");
    return found;
  }

  async function contactIdOf(projectId: string, input: { contactId: string; email: string }): Promise<string> {
    if (input.contactId) {
      const { contact } = await contacts.getContact({ projectId, contactId: input.contactId });
      if (!contact) throw notFound("Contact");
      return contact.id;
    }
    if (input.email) {
      const { contacts: found } = await contacts.lookupContacts({ projectId, emails: [input.email] });
      const contact = found[0];
      if (!contact) throw notFound("Contact", { details: { email: input.email } });
      return contact.id;
    }
    throw validationFailed("contactId or email is required", [
      { field: "contactId", code: "required", message: "give contactId or email" },
    ]);
  }

  return {
    async start(projectId: string, workflowId: string, input: { contactId: string; email: string; context: JsonObject }) {
      const workflow = await workflowOf(projectId, workflowId);
      const problem = graphProblem(workflow.steps, workflow.transitions);
      if (problem) throw new DomainError("failed-precondition", "WORKFLOW_INVALID", `The workflow cannot run: ${problem}`);
      const contactId = await contactIdOf(projectId, input);
      const id = await db.$transaction((tx) => startExecution(tx, workflow, contactId, { name: "manual", data: {} }, input.context));
      if (!id) {
        throw new DomainError(
          "conflict",
          "CONTACT_ALREADY_ENTERED",
          "The contact has had an execution of this workflow, which does not allow re-entry",
          {
            suggestion: "Set allowReentry to true to let contacts run it again",
          },
        );
      }
      deps.nudgeRunner();
      return execution(projectId, workflowId, id);
    },

    async list(projectId: string, workflowId: string, options: { status: string; limit: number; cursor: string }) {
      await workflowOf(projectId, workflowId);
      const status = options.status.toUpperCase();
      if (status && !isExecutionStatus(status)) {
        throw new DomainError(
          "invalid-argument",
          "INVALID_STATUS",
          `Unknown status "${options.status}": use RUNNING, WAITING, COMPLETED, EXITED, FAILED or CANCELLED`,
        );
      }
      const where = { workflowId, projectId, ...(status ? { status } : {}) };
      const take = Math.min(Math.max(options.limit || 20, 1), maxPage);
      const cursor = options.cursor && isId(options.cursor) ? options.cursor : undefined;
      const rows = await db.workflowExecution.findMany({
        where,
        orderBy: [{ startedAt: "desc" }, { id: "desc" }],
        take: take + 1,
        ...(cursor ? { cursor: { projectId_id: { projectId, id: cursor } }, skip: 1 } : {}),
      });
      const page = rows.slice(0, take);
      return {
        executions: page,
        nextCursor: rows.length > take ? (page.at(-1)?.id ?? "") : "",
        total: cursor ? 0 : await db.workflowExecution.count({ where }),
      };
    },

    get: execution,

    /**
     * One contact's executions of every workflow of the project, newest first, each with its step runs (oldest first)
     * and its workflow's name, a page at a time, for its data export (GET /contacts/:id/export): read by
     * workflow_executions_project_id_contact_id_idx. An erased contact's executions name no contact and are never found.
     */
    async *exportForContact(projectId: string, contactId: string, pageSize: number) {
      if (!projectId || !contactId) return;
      const take = pageSize <= 0 ? exportPage.fallback : Math.min(Math.trunc(pageSize), exportPage.max);
      let before: { startedAt: Date; id: string } | undefined;
      for (;;) {
        const page = await db.workflowExecution.findMany({
          where: {
            projectId,
            contactId,
            ...(before ? { OR: [{ startedAt: { lt: before.startedAt } }, { startedAt: before.startedAt, id: { lt: before.id } }] } : {}),
          },
          orderBy: [{ startedAt: "desc" }, { id: "desc" }],
          take,
          include: { steps: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] }, workflow: { select: { name: true } } },
        });
        if (page.length > 0) yield page;
        const last = page.at(-1);
        if (!last || page.length < take) return;
        before = { startedAt: last.startedAt, id: last.id };
      }
    },

    async cancel(projectId: string, workflowId: string, executionId: string) {
      const found = await execution(projectId, workflowId, executionId);
      const cancelled = await db.$transaction((tx) => cancelIn(tx, { projectId, workflowId, id: found.id }));
      if (cancelled === 0) {
        throw new DomainError(
          "failed-precondition",
          "EXECUTION_NOT_ACTIVE",
          `The execution is ${found.status}: only RUNNING or WAITING executions can be cancelled`,
        );
      }
      return execution(projectId, workflowId, executionId);
    },

    async cancelAll(projectId: string, workflowId: string): Promise<number> {
      await workflowOf(projectId, workflowId);
      return db.$transaction((tx) => cancelIn(tx, { projectId, workflowId }));
    },

    /**
     * Every active execution (RUNNING or WAITING) at its current step, soonest first: a wait by its end (a DELAY,
     * a WAIT_FOR_EVENT's timeout), a queued step by its turn, a running step by when it started.
     */
    async upcoming(projectId: string, limit: number) {
      const rows = await db.$queryRaw<
        Array<{
          workflow_id: string;
          workflow_name: string;
          execution_id: string;
          execution_status: string;
          contact_id: string;
          step_id: string;
          step_type: string;
          waiting_for: string | null;
          due_at: Date;
        }>
      >`
        SELECT e.workflow_id, w.name AS workflow_name, e.id AS execution_id, e.status AS execution_status, e.contact_id,
               coalesce(r.step_id::text, e.current_step_id::text, '') AS step_id, coalesce(r.step_type, '') AS step_type,
               r.waiting_for,
               coalesce(CASE r.status WHEN 'WAITING' THEN r.due_at WHEN 'RUNNING' THEN r.started_at ELSE r.run_at END, e.updated_at) AS due_at
        FROM workflows w
        JOIN workflow_executions e ON e.workflow_id = w.id AND e.status IN ('RUNNING', 'WAITING')
        LEFT JOIN LATERAL (
          SELECT step_id, step_type, status, waiting_for, due_at, run_at, started_at FROM workflow_step_runs
          WHERE project_id = e.project_id AND execution_id = e.id AND status IN ('PENDING', 'WAITING', 'RUNNING')
          ORDER BY created_at DESC LIMIT 1
        ) r ON true
        WHERE w.project_id = ${projectId}
        ORDER BY due_at, e.id
        LIMIT ${Math.min(Math.max(limit, 1), 100)}`;
      return rows.map((row) => ({
        workflowId: row.workflow_id,
        workflowName: row.workflow_name,
        executionId: row.execution_id,
        executionStatus: row.execution_status,
        contactId: row.contact_id,
        stepId: row.step_id,
        stepType: row.step_type,
        waitingFor: row.waiting_for ?? "",
        dueAt: row.due_at,
      }));
    },
  };
}

export type Executions = ReturnType<typeof createExecutions>;
