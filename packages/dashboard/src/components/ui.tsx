import { type FormEvent, type ReactNode, useId, useState } from "react";
import { messageOf } from "../api";
import { useToast } from "./toasts";

export function Page(props: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">{props.title}</h1>
        <div className="actions">{props.actions}</div>
      </header>
      {props.children}
    </section>
  );
}

/** A table's column headings. */
export function Headings(props: { names: string[] }) {
  return (
    <thead>
      <tr>
        {props.names.map((name, index) => (
          <th key={name || index} scope="col">
            {name}
          </th>
        ))}
      </tr>
    </thead>
  );
}

export function ErrorNote(props: { error: string | undefined }) {
  if (!props.error) return null;
  return (
    <p className="error" role="alert">
      {props.error}
    </p>
  );
}

export function Field(props: {
  label: string;
  name?: string;
  type?: string;
  value: string;
  onChange: (value: string) => void;
  required?: boolean;
  placeholder?: string;
  autoComplete?: string;
  multiline?: boolean;
  rows?: number;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.multiline ? (
        <textarea
          id={id}
          name={props.name}
          value={props.value}
          rows={props.rows ?? 8}
          required={props.required}
          placeholder={props.placeholder}
          onChange={(event) => props.onChange(event.target.value)}
        />
      ) : (
        <input
          id={id}
          name={props.name}
          type={props.type ?? "text"}
          value={props.value}
          required={props.required}
          placeholder={props.placeholder}
          autoComplete={props.autoComplete}
          onChange={(event) => props.onChange(event.target.value)}
        />
      )}
    </div>
  );
}

export function Select<T extends string>(props: { label: string; value: T; options: readonly T[]; onChange: (value: T) => void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(event) => props.onChange(event.target.value as T)}>
        {props.options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A select whose options have labels of their own (ids, names), with an empty first choice. */
export function Choice(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: { value: string; label: string }[];
  empty: string;
  required?: boolean;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select id={id} value={props.value} required={props.required} onChange={(event) => props.onChange(event.target.value)}>
        <option value="">{props.empty}</option>
        {props.options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </div>
  );
}

/** What an action's toast says: `done` when given, else the action's own label. */
const doneMessage = (label: string, done: string | undefined) => done ?? `${label}: done`;

/**
 * A form whose submit runs `action`, shows its failure, and is disabled meanwhile; a toast tells how it went
 * (`done` is the success's message, when the label alone says too little).
 */
export function ActionForm(props: { submit: string; action: () => Promise<void>; children: ReactNode; className?: string; done?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const toast = useToast();
  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await props.action();
      toast("success", doneMessage(props.submit, props.done));
    } catch (failure) {
      setError(messageOf(failure));
      toast("failure", `${props.submit}: ${messageOf(failure)}`);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form className={props.className ?? "form"} onSubmit={onSubmit}>
      {props.children}
      <ErrorNote error={error} />
      <button type="submit" disabled={busy}>
        {busy ? "Working…" : props.submit}
      </button>
    </form>
  );
}

/** A button whose click runs `action`; failures show beside it, and a toast tells how it went. */
export function ActionButton(props: { label: string; action: () => Promise<void>; kind?: "danger" | "secondary"; done?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const toast = useToast();
  return (
    <span className="action-button">
      <button
        type="button"
        className={props.kind}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(undefined);
          try {
            await props.action();
            toast("success", doneMessage(props.label, props.done));
          } catch (failure) {
            setError(messageOf(failure));
            toast("failure", `${props.label}: ${messageOf(failure)}`);
          } finally {
            setBusy(false);
          }
        }}
      >
        {props.label}
      </button>
      {error ? (
        <span className="error" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}

/** A destructive action behind a typed confirmation: the button unlocks once `phrase` is typed. */
export function TypedConfirm(props: { label: string; phrase: string; action: () => Promise<void> }) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  if (!open) {
    return (
      <button type="button" className="danger" onClick={() => setOpen(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <fieldset className="confirm" aria-label={props.label}>
      <Field label={`Type “${props.phrase}” to confirm`} value={typed} onChange={setTyped} />
      <ActionButton
        label={props.label}
        kind="danger"
        action={async () => {
          if (typed !== props.phrase) throw new Error(`Type “${props.phrase}” exactly`);
          await props.action();
          setOpen(false);
        }}
      />
      <button type="button" className="secondary" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </fieldset>
  );
}

export function CopyButton(props: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="secondary small"
      aria-label={props.label ?? `Copy ${props.value}`}
      onClick={async () => {
        await navigator.clipboard?.writeText(props.value).catch(() => undefined);
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? "Copied" : "Copy"}
    </button>
  );
}

/** What an empty list says instead of an empty table: why it is empty, and what to do next. */
export function EmptyState(props: { children: ReactNode }) {
  return <p className="empty">{props.children}</p>;
}

export function Loading(props: { loading: boolean; error?: string }) {
  if (props.error) return <ErrorNote error={props.error} />;
  return props.loading ? <p aria-live="polite">Loading…</p> : null;
}

export const formatDate = (value: unknown): string => (typeof value === "string" && value ? new Date(value).toLocaleString() : "—");

export const percent = (rate: number | undefined): string => `${((rate ?? 0) * 100).toFixed(1)} %`;
