import { useEffect, useId, useRef, useState } from "react";
import { BlockEditor } from "./block-editor";
import { type EditorSource, emptySource, hasUnsubscribeFooter } from "./blocks";
import { compileEmail } from "./compile";
import { LiquidField, LiquidTargets, VariablePicker } from "./liquid-fields";

export interface EmailContent {
  body: string;
  /** The blocks the body was compiled from; null when the body is written as HTML. */
  editor: EditorSource | null;
}

/**
 * The body of a template or a campaign: composed with blocks (compiled to email HTML by MJML,
 * in this lazily loaded chunk) or written as raw HTML. Every change hands both back, so the
 * page saves the body and its source together.
 */
export default function EmailComposer(props: { value: EmailContent; onChange: (value: EmailContent) => void; title: string }) {
  const { value, onChange } = props;
  const mode = value.editor ? "blocks" : "html";
  const groupName = useId();
  const [warnings, setWarnings] = useState<string[]>([]);
  const latest = useRef(props);
  latest.current = props;

  const setSource = (editor: EditorSource) => {
    const compiled = compileEmail(editor, latest.current.title);
    setWarnings(compiled.warnings);
    onChange({ body: compiled.html, editor });
  };
  // The title (the subject) is part of the compiled HTML: recompile when it changes, and on the first render of new blocks.
  useEffect(() => {
    const { editor } = latest.current.value;
    if (editor) {
      const compiled = compileEmail(editor, props.title);
      setWarnings(compiled.warnings);
      if (compiled.html !== latest.current.value.body) latest.current.onChange({ body: compiled.html, editor });
    }
  }, [props.title]);

  return (
    <LiquidTargets>
      {(target) => (
        <section className="composer" aria-label="Email body">
          <fieldset className="mode">
            <legend>Compose the body with</legend>
            <label>
              <input
                type="radio"
                name={groupName}
                checked={mode === "blocks"}
                onChange={() => {
                  if (value.body.trim() && !value.editor && !window.confirm("Start from blocks? The HTML written by hand is replaced."))
                    return;
                  setSource(emptySource());
                }}
              />{" "}
              Blocks
            </label>
            <label>
              <input
                type="radio"
                name={groupName}
                checked={mode === "html"}
                onChange={() => onChange({ body: value.body, editor: null })}
              />{" "}
              HTML
            </label>
            {mode === "html" && value.body ? (
              <p className="hint">Switching to HTML keeps the compiled HTML to edit by hand; the blocks are then dropped when saved.</p>
            ) : null}
          </fieldset>
          <VariablePicker target={target} />
          {value.editor ? (
            <>
              {hasUnsubscribeFooter(value.editor) ? null : (
                <p className="banner" role="status">
                  No footer block: marketing email needs an unsubscribe link. Add “Footer with unsubscribe link”.
                </p>
              )}
              <BlockEditor value={value.editor} onChange={setSource} />
              {warnings.length > 0 ? (
                <ul className="error" aria-label="MJML warnings">
                  {warnings.map((warning) => (
                    <li key={warning}>{warning}</li>
                  ))}
                </ul>
              ) : null}
            </>
          ) : (
            <LiquidField
              label="Body (HTML with Liquid)"
              value={value.body}
              multiline
              rows={14}
              onChange={(body) => onChange({ body, editor: null })}
            />
          )}
        </section>
      )}
    </LiquidTargets>
  );
}
