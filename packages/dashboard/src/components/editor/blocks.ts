import type { paths } from "@herald/client";

/**
 * The block document the editor keeps with a template or a campaign (its `editor` field,
 * docs/api-decisions.md "Editor source"), and its translation to MJML. The gateway's OpenAPI
 * schema is the reference: these types are read from it.
 */
export type EditorSource = NonNullable<paths["/templates/{id}"]["get"]["responses"]["200"]["content"]["application/json"]["editor"]>;
export type Block = EditorSource["blocks"][number];
export type BlockType = Block["type"];
export type ColumnsBlock = Extract<Block, { type: "columns" }>;
export type ColumnBlock = ColumnsBlock["columns"][number]["blocks"][number];
export type SocialNetwork = Extract<Block, { type: "social" }>["links"][number]["network"];

export const blockLabels: Record<BlockType, string> = {
  text: "Text",
  image: "Image",
  button: "Button",
  columns: "Columns",
  divider: "Divider",
  spacer: "Spacer",
  social: "Social links",
  footer: "Footer with unsubscribe link",
};
export const blockTypes = Object.keys(blockLabels) as BlockType[];
export const columnBlockTypes = ["text", "image", "button", "divider", "spacer", "social"] as const;
export const socialNetworks: SocialNetwork[] = ["facebook", "x", "instagram", "linkedin", "youtube", "github", "web"];

export function newBlock(type: BlockType): Block {
  switch (type) {
    case "text":
      return { type, text: "", style: "paragraph", align: "left" };
    case "image":
      return { type, src: "", alt: "", width: 600 };
    case "button":
      return { type, label: "Open", href: "https://", color: "#2563eb", align: "center" };
    case "columns":
      return {
        type,
        columns: [{ blocks: [{ type: "text", text: "" }] }, { blocks: [{ type: "text", text: "" }] }],
      };
    case "divider":
      return { type };
    case "spacer":
      return { type, height: 24 };
    case "social":
      return { type, links: [{ network: "web", href: "https://" }] };
    case "footer":
      return { type, text: "You receive this email because you signed up.", unsubscribeLabel: "Unsubscribe" };
  }
}

export const emptySource = (): EditorSource => ({
  format: "herald-blocks",
  version: 1,
  settings: { background: "#f3f4f6", contentBackground: "#ffffff", textColor: "#1f2933" },
  blocks: [newBlock("text"), newBlock("footer")],
});

const liquidToken = /(\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\})/;

/**
 * Escapes text for HTML but leaves Liquid tags as written, so that `{{ name ?? "friend" }}`
 * reaches the renderer intact (the renderer escapes the values it inserts). In an attribute,
 * a Liquid tag's double quotes become single ones: Liquid reads both alike.
 */
export function escapeAroundLiquid(text: string, inAttribute = false): string {
  return text
    .split(liquidToken)
    .map((part, index) => {
      if (index % 2 === 1) return inAttribute ? part.replaceAll('"', "'") : part;
      const escaped = part.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
      return inAttribute ? escaped.replaceAll('"', "&quot;") : escaped;
    })
    .join("");
}

/** Paragraphs on blank lines, line breaks within them. */
const paragraphs = (text: string) =>
  text
    .split(/\n\s*\n/)
    .map((paragraph) => escapeAroundLiquid(paragraph.trim()).replaceAll("\n", "<br />"))
    .filter(Boolean);

const attr = (value: string) => escapeAroundLiquid(value, true);

const socialIcons: Record<SocialNetwork, { name: string; label: string }> = {
  facebook: { name: "facebook-noshare", label: "Facebook" },
  x: { name: "x-noshare", label: "X" },
  instagram: { name: "instagram", label: "Instagram" },
  linkedin: { name: "linkedin-noshare", label: "LinkedIn" },
  youtube: { name: "youtube", label: "YouTube" },
  github: { name: "github", label: "GitHub" },
  web: { name: "web", label: "Website" },
};

function blockMjml(block: Block | ColumnBlock, textColor: string): string {
  switch (block.type) {
    case "text": {
      const heading = block.style === "heading";
      const inner = paragraphs(block.text)
        .map((paragraph) =>
          heading ? `<h2 style="margin:0 0 8px;font-size:24px;">${paragraph}</h2>` : `<p style="margin:0 0 12px;">${paragraph}</p>`,
        )
        .join("");
      return `<mj-text align="${block.align ?? "left"}" color="${textColor}" font-size="16px" line-height="1.5">${inner}</mj-text>`;
    }
    case "image":
      if (!block.src) return "";
      return `<mj-image src="${attr(block.src)}" alt="${attr(block.alt)}" width="${block.width ?? 600}px"${block.href ? ` href="${attr(block.href)}"` : ""} />`;
    case "button":
      return `<mj-button href="${attr(block.href)}" background-color="${block.color ?? "#2563eb"}" align="${block.align ?? "center"}" font-size="16px" inner-padding="12px 24px">${escapeAroundLiquid(block.label)}</mj-button>`;
    case "divider":
      return `<mj-divider border-width="1px" border-color="#d1d5db" />`;
    case "spacer":
      return `<mj-spacer height="${block.height}px" />`;
    case "social": {
      const links = block.links
        .filter((link) => link.href && link.href !== "https://")
        .map((link) => {
          const icon = socialIcons[link.network];
          return `<mj-social-element name="${icon.name}" href="${attr(link.href)}" alt="${icon.label}">${icon.label}</mj-social-element>`;
        })
        .join("");
      return links ? `<mj-social mode="horizontal" font-size="13px" icon-size="24px" color="${textColor}">${links}</mj-social>` : "";
    }
    case "columns":
      return "";
    case "footer":
      return "";
  }
}

/** The whole document as MJML: one section per block, so columns stack on narrow screens. */
export function toMjml(source: EditorSource, title = ""): string {
  const background = source.settings?.background ?? "#f3f4f6";
  const content = source.settings?.contentBackground ?? "#ffffff";
  const textColor = source.settings?.textColor ?? "#1f2933";
  const sections = source.blocks.map((block) => {
    if (block.type === "columns") {
      const columns = block.columns.map(
        (column) => `<mj-column>${column.blocks.map((each) => blockMjml(each, textColor)).join("")}</mj-column>`,
      );
      return `<mj-section background-color="${content}" padding="8px 0">${columns.join("")}</mj-section>`;
    }
    if (block.type === "footer") {
      const text = paragraphs(block.text).join("<br />");
      return `<mj-section padding="16px 0"><mj-column><mj-text align="center" color="#6b7280" font-size="12px" line-height="1.5">${text}${text ? "<br />" : ""}<a href="{{ unsubscribeUrl }}" style="color:#6b7280;">${escapeAroundLiquid(block.unsubscribeLabel)}</a></mj-text></mj-column></mj-section>`;
    }
    return `<mj-section background-color="${content}" padding="4px 0"><mj-column>${blockMjml(block, textColor)}</mj-column></mj-section>`;
  });
  return [
    "<mjml>",
    `<mj-head><mj-title>${escapeAroundLiquid(title)}</mj-title><mj-attributes><mj-all font-family="Helvetica, Arial, sans-serif" /></mj-attributes></mj-head>`,
    `<mj-body background-color="${background}" width="600px">`,
    ...sections,
    "</mj-body></mjml>",
  ].join("\n");
}

/** What a document lacks before it can be sent to a list: marketing email needs a way out. */
export const hasUnsubscribeFooter = (source: EditorSource): boolean => source.blocks.some((block) => block.type === "footer");
