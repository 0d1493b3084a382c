import { type Static, Type } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";

/**
 * The dashboard editor's source of a template's or a campaign's body (docs/api-decisions.md
 * "Editor source"): a list of blocks the dashboard compiles to the body's HTML through MJML.
 * The owning service stores it as given (a JSON object of at most 256 KB); its shape is checked
 * here, so that a bad one is a 422 naming the field, and so that the OpenAPI document shows it.
 * Routes name it by reference (EditorSourceRef): the document holds it once, as the component
 * EditorSource, rather than inlined in every request and response that carries it.
 */

const closed = { additionalProperties: false } as const;
const Url = Type.String({ maxLength: 2_000 });
const Color = Type.String({ pattern: "^#[0-9a-fA-F]{6}$" });
const Align = Type.Union([Type.Literal("left"), Type.Literal("center"), Type.Literal("right")]);

const TextBlock = Type.Object(
  {
    type: Type.Literal("text"),
    /** Plain text with Liquid; a blank line starts a new paragraph. */
    text: Type.String({ maxLength: 20_000 }),
    style: Type.Optional(Type.Union([Type.Literal("paragraph"), Type.Literal("heading")])),
    align: Type.Optional(Align),
  },
  closed,
);
const ImageBlock = Type.Object(
  {
    type: Type.Literal("image"),
    src: Url,
    alt: Type.String({ maxLength: 500 }),
    href: Type.Optional(Url),
    width: Type.Optional(Type.Integer({ minimum: 20, maximum: 600 })),
  },
  closed,
);
const ButtonBlock = Type.Object(
  {
    type: Type.Literal("button"),
    label: Type.String({ maxLength: 200 }),
    href: Url,
    color: Type.Optional(Color),
    align: Type.Optional(Align),
  },
  closed,
);
const DividerBlock = Type.Object({ type: Type.Literal("divider") }, closed);
const SpacerBlock = Type.Object({ type: Type.Literal("spacer"), height: Type.Integer({ minimum: 4, maximum: 200 }) }, closed);
export const socialNetworks = ["facebook", "x", "instagram", "linkedin", "youtube", "github", "web"] as const;
const SocialBlock = Type.Object(
  {
    type: Type.Literal("social"),
    links: Type.Array(Type.Object({ network: Type.Union(socialNetworks.map((network) => Type.Literal(network))), href: Url }, closed), {
      maxItems: 10,
    }),
  },
  closed,
);
const FooterBlock = Type.Object(
  {
    type: Type.Literal("footer"),
    /** Who sends and why, with Liquid; the unsubscribe link follows it. */
    text: Type.String({ maxLength: 5_000 }),
    unsubscribeLabel: Type.String({ minLength: 1, maxLength: 200 }),
  },
  closed,
);
const ColumnBlock = Type.Union([TextBlock, ImageBlock, ButtonBlock, DividerBlock, SpacerBlock, SocialBlock]);
const ColumnsBlock = Type.Object(
  {
    type: Type.Literal("columns"),
    columns: Type.Array(Type.Object({ blocks: Type.Array(ColumnBlock, { maxItems: 20 }) }, closed), { minItems: 2, maxItems: 3 }),
  },
  closed,
);

const editorSourceId = "EditorSource";

export const EditorSourceSchema = Type.Object(
  {
    format: Type.Literal("herald-blocks"),
    version: Type.Literal(1),
    settings: Type.Optional(
      Type.Object({ background: Type.Optional(Color), contentBackground: Type.Optional(Color), textColor: Type.Optional(Color) }, closed),
    ),
    blocks: Type.Array(
      Type.Union([TextBlock, ImageBlock, ButtonBlock, DividerBlock, SpacerBlock, SocialBlock, ColumnsBlock, FooterBlock]),
      { maxItems: 100 },
    ),
  },
  { ...closed, $id: editorSourceId, title: "EditorSource" },
);
export type EditorSource = Static<typeof EditorSourceSchema>;

/** EditorSourceSchema where a route's schema holds it: the gateway adds the schema once (registerEditorSource). */
export const EditorSourceRef = Type.Unsafe<EditorSource>(Type.Ref(editorSourceId));

/** Makes EditorSourceRef resolvable by the routes' validation and serialization, and the OpenAPI document's component. */
export const registerEditorSource = (app: FastifyInstance) => app.addSchema(EditorSourceSchema);

/** An editor source from a request: undefined leaves it, null clears it (an empty text for the services). */
export const editorJsonOf = (editor: EditorSource | null | undefined): string | undefined =>
  editor === undefined ? undefined : editor === null ? "" : JSON.stringify(editor);

/** The stored JSON text as the response's object; none is null. */
export const editorOf = (json: string): EditorSource | null => (json ? (JSON.parse(json) as EditorSource) : null);
