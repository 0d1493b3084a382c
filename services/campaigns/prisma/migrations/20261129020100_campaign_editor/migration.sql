-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN     "editor" JSONB;

