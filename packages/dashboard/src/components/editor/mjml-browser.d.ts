// mjml-browser ships no types: the one call the editor makes.
declare module "mjml-browser" {
  interface MjmlError {
    line: number;
    message: string;
    tagName: string;
    formattedMessage: string;
  }
  export default function mjml2html(
    mjml: string,
    options?: { validationLevel?: "strict" | "soft" | "skip"; keepComments?: boolean; minify?: boolean },
  ): { html: string; errors: MjmlError[] };
}
