-- AlterTable
ALTER TABLE "templates" ADD COLUMN     "editor" JSONB;

