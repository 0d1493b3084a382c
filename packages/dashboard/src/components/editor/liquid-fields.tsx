import { createContext, type ReactNode, useContext, useId, useRef, useState } from "react";
import { api, orThrow } from "../../api";
import { useLoad } from "../../hooks";

/** Where the variable picker inserts: the text control the user was last in. */
interface InsertTarget {
  insert: (token: string) => void;
  label: string;
}
const TargetContext = createContext<{ set: (target: InsertTarget) => void } | undefined>(undefined);

export function LiquidTargets(props: { children: (target: InsertTarget | undefined) => ReactNode }) {
  const [target, setTarget] = useState<InsertTarget>();
  return <TargetContext.Provider value={{ set: setTarget }}>{props.children(target)}</TargetContext.Provider>;
}

/** A text input or textarea that the variable picker can insert into, at the cursor. */
export function LiquidField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  multiline?: boolean;
  rows?: number;
  required?: boolean;
  type?: string;
}) {
  const id = useId();
  const targets = useContext(TargetContext);
  const element = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const latest = useRef(props);
  latest.current = props;
  const onFocus = () =>
    targets?.set({
      label: props.label,
      insert: (token) => {
        const control = element.current;
        const { value, onChange } = latest.current;
        const start = control?.selectionStart ?? value.length;
        const end = control?.selectionEnd ?? value.length;
        onChange(`${value.slice(0, start)}${token}${value.slice(end)}`);
        requestAnimationFrame(() => {
          control?.focus();
          control?.setSelectionRange(start + token.length, start + token.length);
        });
      },
    });
  const common = {
    id,
    ref: element,
    value: props.value,
    required: props.required,
    onFocus,
    onChange: (event: { target: { value: string } }) => props.onChange(event.target.value),
  };
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.multiline ? <textarea rows={props.rows ?? 4} {...common} /> : <input type={props.type ?? "text"} {...common} />}
    </div>
  );
}

/** `data.firstName` from GET /contacts/fields is `{{ firstName }}` in a template; standard fields are named plainly. */
export function liquidTokenOf(field: string, fallback: string): string {
  const name = field.startsWith("data.") ? field.slice(5) : field;
  const path = /^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/.test(name) ? name : `data[${JSON.stringify(name)}]`;
  return fallback === "" ? `{{ ${path} }}` : `{{ ${path} ?? ${JSON.stringify(fallback)} }}`;
}

/** The variable picker: a contact field and a fallback for contacts without it, inserted where the cursor was. */
export function VariablePicker(props: { target: InsertTarget | undefined }) {
  const fields = useLoad(async () => orThrow(await api.GET("/contacts/fields")).data.fields, []);
  const [field, setField] = useState("");
  const [fallback, setFallback] = useState("");
  const fieldId = useId();
  const fallbackId = useId();
  const choices = [...(fields.data ?? []).map((each) => each.field).filter((name) => name !== "subscribed"), "unsubscribeUrl", "manageUrl"];
  const chosen = field || choices[0] || "";
  return (
    <fieldset className="variable-picker">
      <legend>Insert a variable</legend>
      <div className="field">
        <label htmlFor={fieldId}>Contact field</label>
        <select id={fieldId} value={chosen} onChange={(event) => setField(event.target.value)}>
          {choices.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={fallbackId}>Fallback when the contact has none</label>
        <input id={fallbackId} value={fallback} onChange={(event) => setFallback(event.target.value)} />
      </div>
      <p className="hint">
        {props.target ? (
          <>
            Goes into <strong>{props.target.label}</strong> at the cursor: <code>{liquidTokenOf(chosen, fallback)}</code>
          </>
        ) : (
          "Click into a text first: the variable goes where the cursor is."
        )}
      </p>
      <button
        type="button"
        className="secondary"
        disabled={!props.target || !chosen}
        onClick={() => props.target?.insert(liquidTokenOf(chosen, fallback))}
      >
        Insert the variable
      </button>
    </fieldset>
  );
}
