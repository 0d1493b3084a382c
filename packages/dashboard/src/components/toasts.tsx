import { createContext, type ReactNode, useCallback, useContext, useEffect, useId, useRef, useState } from "react";

export interface Toast {
  id: number;
  kind: "success" | "failure";
  message: string;
}

type Show = (kind: Toast["kind"], message: string) => void;

const ToastContext = createContext<Show>(() => undefined);

/** Shows a toast from anywhere under <Toasts>: `toast("success", "Saved")`. */
export const useToast = (): Show => useContext(ToastContext);

/**
 * How long a toast stays, unless the focus is on it (WCAG 2.2.1: a keyboard user may keep it). Hovering does not hold it:
 * a toast held under the pointer would cover what it lies on for good; failures also stay beside their form.
 */
const visibleMs = { success: 5000, failure: 9000 } as const;

/**
 * The app's toast region, mounted once: a polite live region (failures are announced beside their form as alerts already),
 * each toast dismissable with its button (or Escape) and hidden after a while, and the region a landmark that the keyboard reaches.
 */
export function Toasts(props: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const next = useRef(0);
  const show = useCallback<Show>((kind, message) => {
    next.current += 1;
    const toast = { id: next.current, kind, message };
    // The last five at most: a burst of actions does not cover the page.
    setToasts((previous) => [...previous.slice(-4), toast]);
  }, []);
  const dismiss = useCallback((id: number) => setToasts((previous) => previous.filter((toast) => toast.id !== id)), []);
  return (
    <ToastContext.Provider value={show}>
      {props.children}
      <section className="toasts" aria-label="Notifications">
        {/* The live region wraps the list: a role on the list itself would take its items out of a list. */}
        <div role="status" aria-live="polite" aria-relevant="additions">
          <ul>
            {toasts.map((toast) => (
              <ToastItem key={toast.id} toast={toast} onDismiss={dismiss} />
            ))}
          </ul>
        </div>
      </section>
    </ToastContext.Provider>
  );
}

function ToastItem(props: { toast: Toast; onDismiss: (id: number) => void }) {
  const { toast, onDismiss } = props;
  const [held, setHeld] = useState(false);
  const messageId = useId();
  useEffect(() => {
    if (held) return;
    const timer = setTimeout(() => onDismiss(toast.id), visibleMs[toast.kind]);
    return () => clearTimeout(timer);
  }, [held, toast, onDismiss]);
  return (
    <li
      className={`toast ${toast.kind}`}
      data-testid="toast"
      onFocus={() => setHeld(true)}
      onBlur={() => setHeld(false)}
      onKeyDown={(event) => event.key === "Escape" && onDismiss(toast.id)}
    >
      <span id={messageId}>{toast.message}</span>
      {/* Named "Dismiss" alone, described by the message: a name holding the action's label would read as that action. */}
      <button
        type="button"
        className="secondary small"
        aria-label="Dismiss"
        aria-describedby={messageId}
        onClick={() => onDismiss(toast.id)}
      >
        ×
      </button>
    </li>
  );
}
