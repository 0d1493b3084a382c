import { useId, useState } from "react";
import { api, messageOf } from "../../api";
import {
  type Block,
  blockLabels,
  blockTypes,
  type ColumnBlock,
  columnBlockTypes,
  type EditorSource,
  newBlock,
  socialNetworks,
} from "./blocks";
import { LiquidField } from "./liquid-fields";

type Align = "left" | "center" | "right";
const aligns: Align[] = ["left", "center", "right"];

function move<T>(list: T[], from: number, to: number): T[] {
  if (to < 0 || to >= list.length || from === to) return list;
  const copy = [...list];
  const [item] = copy.splice(from, 1);
  if (item !== undefined) copy.splice(to, 0, item);
  return copy;
}

/**
 * The visual editor: a list of blocks, each with its form. Blocks are added from the palette,
 * moved with their buttons (or dragged with a mouse) and removed; every control is a plain
 * form control, so the whole editor works from the keyboard and with a screen reader.
 */
export function BlockEditor(props: { value: EditorSource; onChange: (value: EditorSource) => void }) {
  const { value } = props;
  const [dragged, setDragged] = useState<number>();
  const [announcement, setAnnouncement] = useState("");
  const setBlocks = (blocks: Block[]) => props.onChange({ ...value, blocks });
  const update = (index: number, block: Block) => setBlocks(value.blocks.map((each, i) => (i === index ? block : each)));
  const moveBlock = (from: number, to: number) => {
    if (to < 0 || to >= value.blocks.length) return;
    setBlocks(move(value.blocks, from, to));
    setAnnouncement(`${blockLabels[value.blocks[from]?.type ?? "text"]} moved to position ${to + 1} of ${value.blocks.length}`);
  };
  return (
    <div className="block-editor">
      <fieldset className="palette">
        <legend>Add a block</legend>
        {blockTypes.map((type) => (
          <button
            key={type}
            type="button"
            className="secondary small"
            onClick={() => {
              setBlocks([
                ...value.blocks.filter((block) => block.type !== "footer"),
                newBlock(type),
                ...value.blocks.filter((block) => block.type === "footer" && type !== "footer"),
              ]);
              setAnnouncement(`${blockLabels[type]} added`);
            }}
          >
            + {blockLabels[type]}
          </button>
        ))}
      </fieldset>
      <p className="sr-only" aria-live="polite">
        {announcement}
      </p>
      <ol className="blocks" aria-label="Blocks of the email">
        {value.blocks.map((block, index) => (
          <li
            // biome-ignore lint/suspicious/noArrayIndexKey: blocks have no ids; the position is their identity in the form.
            key={index}
            className={dragged === index ? "block dragging" : "block"}
            draggable
            onDragStart={() => setDragged(index)}
            onDragOver={(event) => event.preventDefault()}
            onDrop={(event) => {
              event.preventDefault();
              if (dragged !== undefined) moveBlock(dragged, index);
              setDragged(undefined);
            }}
            onDragEnd={() => setDragged(undefined)}
          >
            <fieldset>
              <legend>
                {index + 1}. {blockLabels[block.type]}
              </legend>
              <div className="block-tools">
                <button type="button" className="secondary small" disabled={index === 0} onClick={() => moveBlock(index, index - 1)}>
                  Move up<span className="sr-only"> block {index + 1}</span>
                </button>
                <button
                  type="button"
                  className="secondary small"
                  disabled={index === value.blocks.length - 1}
                  onClick={() => moveBlock(index, index + 1)}
                >
                  Move down<span className="sr-only"> block {index + 1}</span>
                </button>
                <button
                  type="button"
                  className="danger small"
                  onClick={() => {
                    setBlocks(value.blocks.filter((_, i) => i !== index));
                    setAnnouncement(`${blockLabels[block.type]} removed`);
                  }}
                >
                  Remove<span className="sr-only"> block {index + 1}</span>
                </button>
              </div>
              <BlockForm block={block} onChange={(changed) => update(index, changed)} />
            </fieldset>
          </li>
        ))}
      </ol>
      {value.blocks.length === 0 ? <p>No blocks yet: add a text, an image or a button from the palette above.</p> : null}
    </div>
  );
}

function AlignSelect(props: { value: Align | undefined; onChange: (value: Align) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Alignment</label>
      <select id={id} value={props.value ?? "left"} onChange={(event) => props.onChange(event.target.value as Align)}>
        {aligns.map((align) => (
          <option key={align}>{align}</option>
        ))}
      </select>
    </div>
  );
}

function BlockForm(props: { block: Block; onChange: (block: Block) => void }) {
  const { block } = props;
  if (block.type === "columns") {
    return (
      <div className="columns-form">
        {block.columns.map((column, c) => (
          <fieldset
            // biome-ignore lint/suspicious/noArrayIndexKey: columns have no ids.
            key={c}
            className="column"
          >
            <legend>Column {c + 1}</legend>
            {column.blocks.map((inner, b) => (
              <div
                // biome-ignore lint/suspicious/noArrayIndexKey: blocks have no ids.
                key={b}
                className="column-block"
              >
                <p className="column-block-title">
                  {blockLabels[inner.type]}{" "}
                  <button
                    type="button"
                    className="danger small"
                    onClick={() =>
                      props.onChange({
                        ...block,
                        columns: block.columns.map((each, i) => (i === c ? { blocks: each.blocks.filter((_, j) => j !== b) } : each)),
                      })
                    }
                  >
                    Remove
                    <span className="sr-only">
                      {" "}
                      {blockLabels[inner.type]} from column {c + 1}
                    </span>
                  </button>
                </p>
                <BlockForm
                  block={inner}
                  onChange={(changed) =>
                    props.onChange({
                      ...block,
                      columns: block.columns.map((each, i) =>
                        i === c ? { blocks: each.blocks.map((one, j) => (j === b ? (changed as ColumnBlock) : one)) } : each,
                      ),
                    })
                  }
                />
              </div>
            ))}
            <AddToColumn
              column={c}
              onAdd={(type) =>
                props.onChange({
                  ...block,
                  columns: block.columns.map((each, i) => (i === c ? { blocks: [...each.blocks, newBlock(type) as ColumnBlock] } : each)),
                })
              }
            />
          </fieldset>
        ))}
        <div className="block-tools">
          <button
            type="button"
            className="secondary small"
            disabled={block.columns.length >= 3}
            onClick={() => props.onChange({ ...block, columns: [...block.columns, { blocks: [{ type: "text", text: "" }] }] })}
          >
            Add a column
          </button>
          <button
            type="button"
            className="secondary small"
            disabled={block.columns.length <= 2}
            onClick={() => props.onChange({ ...block, columns: block.columns.slice(0, -1) })}
          >
            Remove the last column
          </button>
        </div>
      </div>
    );
  }
  return <LeafForm block={block} onChange={props.onChange} />;
}

function AddToColumn(props: { column: number; onAdd: (type: (typeof columnBlockTypes)[number]) => void }) {
  const id = useId();
  const [type, setType] = useState<(typeof columnBlockTypes)[number]>("text");
  return (
    <div className="inline-add">
      <label htmlFor={id}>Block to add to column {props.column + 1}</label>
      <select id={id} value={type} onChange={(event) => setType(event.target.value as typeof type)}>
        {columnBlockTypes.map((each) => (
          <option key={each} value={each}>
            {blockLabels[each]}
          </option>
        ))}
      </select>
      <button type="button" className="secondary small" onClick={() => props.onAdd(type)}>
        Add<span className="sr-only"> to column {props.column + 1}</span>
      </button>
    </div>
  );
}

function LeafForm(props: { block: Exclude<Block, { type: "columns" }>; onChange: (block: Block) => void }) {
  const { block, onChange } = props;
  switch (block.type) {
    case "text":
      return (
        <>
          <LiquidField label="Text" value={block.text} multiline rows={4} onChange={(text) => onChange({ ...block, text })} />
          <StyleSelect value={block.style ?? "paragraph"} onChange={(style) => onChange({ ...block, style })} />
          <AlignSelect value={block.align} onChange={(align) => onChange({ ...block, align })} />
        </>
      );
    case "image":
      return (
        <>
          <ImageUpload onUploaded={(src) => onChange({ ...block, src })} />
          <LiquidField label="Image URL" type="url" value={block.src} onChange={(src) => onChange({ ...block, src })} />
          <LiquidField label="Alternative text" value={block.alt} onChange={(alt) => onChange({ ...block, alt })} />
          <LiquidField
            label="Link (optional)"
            value={block.href ?? ""}
            onChange={(href) => onChange({ ...block, href: href || undefined })}
          />
          <NumberField
            label="Width (px)"
            min={20}
            max={600}
            value={block.width ?? 600}
            onChange={(width) => onChange({ ...block, width })}
          />
        </>
      );
    case "button":
      return (
        <>
          <LiquidField label="Button label" value={block.label} onChange={(label) => onChange({ ...block, label })} />
          <LiquidField label="Button link" value={block.href} onChange={(href) => onChange({ ...block, href })} />
          <ColorField label="Button colour" value={block.color ?? "#2563eb"} onChange={(color) => onChange({ ...block, color })} />
          <AlignSelect value={block.align} onChange={(align) => onChange({ ...block, align })} />
        </>
      );
    case "divider":
      return <p className="hint">A thin line across the email.</p>;
    case "spacer":
      return (
        <NumberField label="Height (px)" min={4} max={200} value={block.height} onChange={(height) => onChange({ ...block, height })} />
      );
    case "social":
      return (
        <>
          {block.links.map((link, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: links have no ids.
            <div key={index} className="social-link">
              <NetworkSelect
                index={index}
                value={link.network}
                onChange={(network) =>
                  onChange({ ...block, links: block.links.map((each, i) => (i === index ? { ...each, network } : each)) })
                }
              />
              <LiquidField
                label={`Link ${index + 1} address`}
                value={link.href}
                onChange={(href) => onChange({ ...block, links: block.links.map((each, i) => (i === index ? { ...each, href } : each)) })}
              />
              <button
                type="button"
                className="danger small"
                onClick={() => onChange({ ...block, links: block.links.filter((_, i) => i !== index) })}
              >
                Remove link {index + 1}
              </button>
            </div>
          ))}
          <button
            type="button"
            className="secondary small"
            disabled={block.links.length >= 10}
            onClick={() => onChange({ ...block, links: [...block.links, { network: "web", href: "https://" }] })}
          >
            Add a link
          </button>
        </>
      );
    case "footer":
      return (
        <>
          <LiquidField label="Footer text" value={block.text} multiline rows={2} onChange={(text) => onChange({ ...block, text })} />
          <LiquidField
            label="Unsubscribe link text"
            required
            value={block.unsubscribeLabel}
            onChange={(unsubscribeLabel) => onChange({ ...block, unsubscribeLabel })}
          />
          <p className="hint">The link goes to the recipient's own unsubscribe page.</p>
        </>
      );
  }
}

function StyleSelect(props: { value: "paragraph" | "heading"; onChange: (value: "paragraph" | "heading") => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Style</label>
      <select id={id} value={props.value} onChange={(event) => props.onChange(event.target.value as "paragraph" | "heading")}>
        <option value="paragraph">Paragraph</option>
        <option value="heading">Heading</option>
      </select>
    </div>
  );
}

function NetworkSelect(props: { index: number; value: string; onChange: (value: (typeof socialNetworks)[number]) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Link {props.index + 1} network</label>
      <select id={id} value={props.value} onChange={(event) => props.onChange(event.target.value as (typeof socialNetworks)[number])}>
        {socialNetworks.map((network) => (
          <option key={network}>{network}</option>
        ))}
      </select>
    </div>
  );
}

function NumberField(props: { label: string; value: number; min: number; max: number; onChange: (value: number) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        type="number"
        min={props.min}
        max={props.max}
        value={props.value}
        onChange={(event) => {
          const number = Math.round(Number(event.target.value));
          if (Number.isFinite(number)) props.onChange(Math.min(props.max, Math.max(props.min, number)));
        }}
      />
    </div>
  );
}

function ColorField(props: { label: string; value: string; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input id={id} type="color" value={props.value} onChange={(event) => props.onChange(event.target.value)} />
    </div>
  );
}

/** POST /uploads/image: the image's public URL goes into the block. */
function ImageUpload(props: { onUploaded: (url: string) => void }) {
  const id = useId();
  const [state, setState] = useState<{ busy?: boolean; error?: string }>({});
  return (
    <div className="field">
      <label htmlFor={id}>Upload an image (PNG, JPEG, GIF or WebP)</label>
      <input
        id={id}
        type="file"
        accept="image/png,image/jpeg,image/gif,image/webp"
        disabled={state.busy}
        onChange={async (event) => {
          const file = event.target.files?.[0];
          if (!file) return;
          setState({ busy: true });
          try {
            const form = new FormData();
            form.append("file", file);
            const answer = await api.POST("/uploads/image", { body: form as never, bodySerializer: (body: unknown) => body as FormData });
            if (!answer.response.ok || !answer.data) {
              const envelope = answer.error as unknown as { error?: { message?: string } } | undefined;
              throw new Error(envelope?.error?.message ?? "The upload was refused");
            }
            props.onUploaded(answer.data.url);
            setState({});
          } catch (error) {
            setState({ error: messageOf(error) });
          }
        }}
      />
      {state.busy ? <span role="status">Uploading…</span> : null}
      {state.error ? (
        <span className="error" role="alert">
          {state.error}
        </span>
      ) : null}
    </div>
  );
}
