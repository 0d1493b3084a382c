-- AlterTable
ALTER TABLE "emails" ADD COLUMN     "trace_parent" TEXT;
