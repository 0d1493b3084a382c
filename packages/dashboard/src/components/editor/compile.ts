import mjml2html from "mjml-browser";
import type { EditorSource } from "./blocks";
import { toMjml } from "./blocks";

/** The document as email HTML (tables, inline styles, media queries for phones) through MJML. */
export function compileEmail(source: EditorSource, title = ""): { html: string; warnings: string[] } {
  const result = mjml2html(toMjml(source, title), { validationLevel: "soft", keepComments: false });
  return { html: result.html, warnings: result.errors.map((error) => error.formattedMessage) };
}
