import type { ServiceImpl } from "@connectrpc/connect";
import type { JobsService } from "@herald/proto/herald/contacts/v1/jobs_service_pb";
import type { JobRequests } from "../jobs/job-requests.js";
import { bulkActionFromProto, bulkJobToProto, importJobToProto } from "./proto-mapping.js";

export function createJobsRpc(deps: { jobs: JobRequests }): ServiceImpl<typeof JobsService> {
  const { jobs } = deps;
  return {
    async startImport(request) {
      return { job: importJobToProto(await jobs.startImport(request.projectId, request.filename, request.csv)) };
    },

    async getImport(request) {
      return { job: importJobToProto(await jobs.getImport(request.projectId, request.jobId)) };
    },

    async startBulkJob(request) {
      const job = await jobs.startBulkJob(request.projectId, bulkActionFromProto(request.action), request.contactIds);
      return { job: bulkJobToProto(job) };
    },

    async getBulkJob(request) {
      return { job: bulkJobToProto(await jobs.getBulkJob(request.projectId, request.jobId)) };
    },
  };
}
