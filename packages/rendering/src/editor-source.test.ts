import { describe, expect, it } from "vitest";
import { editorSourceMaxLength, parseEditorSource } from "./editor-source.js";

describe("parseEditorSource", () => {
  it("reads an empty text as none, and an object as the source", () => {
    expect(parseEditorSource("")).toEqual({ ok: true, source: null });
    expect(parseEditorSource('{"format":"blocks","version":1,"blocks":[]}')).toEqual({
      ok: true,
      source: { format: "blocks", version: 1, blocks: [] },
    });
  });

  it("refuses what is not a JSON object, and a source past the limit", () => {
    for (const json of ["[]", "3", "null", "{", '"text"']) {
      expect(parseEditorSource(json)).toMatchObject({ ok: false, violation: { field: "editor", code: "invalid_type" } });
    }
    const big = JSON.stringify({ text: "x".repeat(editorSourceMaxLength) });
    expect(parseEditorSource(big)).toMatchObject({ ok: false, violation: { field: "editor", code: "too_big" } });
  });
});
