import { validationFailed } from "@herald/errors";

export const maxProjectNameLength = 100;

/** A project's name, trimmed: 1 to 100 characters. */
export function validProjectName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) {
    throw validationFailed("Invalid project", [{ field: "name", message: "Name is required", code: "required" }]);
  }
  if (trimmed.length > maxProjectNameLength) {
    throw validationFailed("Invalid project", [
      { field: "name", message: `Name must be at most ${maxProjectNameLength} characters`, code: "too_long" },
    ]);
  }
  return trimmed;
}
