import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useId,
  useRef,
  useState,
  type FormEvent,
  type ReactNode,
} from 'react';
import { ApiError } from './api';

/** Loads on mount and when deps change; `reload` runs it again. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data?: T; error?: ApiError; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState({ error: toApiError(error), loading: false }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the caller's deps decide when to load again (as useEffect's own); `load` is a new closure on every render
  }, [...deps, tick]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}

export const toApiError = (error: unknown): ApiError =>
  error instanceof ApiError ? error : new ApiError(0, error instanceof Error ? error.message : String(error));

/**
 * A form whose submit calls the API: the service's error goes next to the field it names
 * (`FieldError`), or above the buttons when it names none.
 */
export function useSubmit<T, A = undefined>(action: (arg?: A) => Promise<T>, onDone?: (result: T) => void) {
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const submit = async (eventOrArg?: FormEvent | A) => {
    const isEvent = typeof eventOrArg === 'object' && eventOrArg !== null && 'preventDefault' in eventOrArg;
    if (isEvent) eventOrArg.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const result = await action(isEvent ? undefined : eventOrArg);
      onDone?.(result);
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  };
  return { submit, error, busy, setError };
}

export function Field(props: {
  label: string;
  name: string;
  error?: ApiError;
  hint?: string;
  children?: (attrs: { id: string; name: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => ReactNode;
  value?: string;
  onChange?: (value: string) => void;
  type?: string;
  required?: boolean;
  autoComplete?: string;
  inputMode?: 'numeric' | 'decimal' | 'email' | 'text';
  placeholder?: string;
}) {
  const id = useId();
  const mine = props.error?.field === props.name;
  const describedBy =
    [mine ? `${id}-error` : '', props.hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  const attrs = { id, name: props.name, 'aria-invalid': mine, 'aria-describedby': describedBy };
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {props.children ? (
        props.children(attrs)
      ) : (
        <input
          {...attrs}
          type={props.type ?? 'text'}
          value={props.value ?? ''}
          onChange={(e) => props.onChange?.(e.target.value)}
          required={props.required}
          autoComplete={props.autoComplete}
          inputMode={props.inputMode}
          placeholder={props.placeholder}
        />
      )}
      {props.hint && (
        <small id={`${id}-hint`} className="hint">
          {props.hint}
        </small>
      )}
      {mine && (
        <small id={`${id}-error`} className="field-error" role="alert">
          {props.error!.detail}
        </small>
      )}
    </div>
  );
}

/** The error of a form that names no field of it (or of a page's load). */
export function FormError({ error, fields = [] }: { error?: ApiError; fields?: string[] }) {
  if (!error || (error.field && fields.includes(error.field))) return null;
  return (
    <p className="error" role="alert">
      {error.message}
    </p>
  );
}

export function Loading() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

/** Cursor pagination, on the server: a stack of the cursors of the pages before. */
export function usePages() {
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  const cursor = stack[stack.length - 1];
  return {
    cursor,
    page: stack.length,
    next: (c: string) => setStack((s) => [...s, c]),
    previous: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    reset: () => setStack([undefined]),
  };
}

export function Pager({ pages, nextCursor }: { pages: ReturnType<typeof usePages>; nextCursor?: string | null }) {
  if (pages.page === 1 && !nextCursor) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="secondary" onClick={pages.previous} disabled={pages.page === 1}>
        Previous
      </button>
      <span>Page {pages.page}</span>
      <button
        type="button"
        className="secondary"
        onClick={() => nextCursor && pages.next(nextCursor)}
        disabled={!nextCursor}
      >
        Next
      </button>
    </nav>
  );
}

/**
 * A labelled table that scrolls sideways inside its frame when it is wider than the screen
 * (focusable, so a keyboard can scroll it); with `cards`, on a phone its rows become cards instead
 * (the cells carry `data-label`: see DataTable).
 */
export function TableWrap({
  label,
  children,
  busy,
  cards,
}: {
  label: string;
  children: ReactNode;
  busy?: boolean;
  cards?: boolean;
}) {
  return (
    <div
      className={cards ? 'table-wrap cards' : 'table-wrap'}
      role="region"
      aria-label={label}
      aria-busy={busy || undefined}
      tabIndex={0}
    >
      <table role={cards ? 'table' : undefined}>{children}</table>
    </div>
  );
}

interface ConfirmRequest {
  title: string;
  body?: string;
  confirm: string;
  resolve: (ok: boolean) => void;
}
const ConfirmContext = createContext<(r: Omit<ConfirmRequest, 'resolve'>) => Promise<boolean>>(async () => false);

/** Every destructive action asks first, in a modal <dialog> (focus trapped, Escape cancels). */
export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [request, setRequest] = useState<ConfirmRequest>();
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    if (request) dialog.current?.showModal();
    else dialog.current?.close();
  }, [request]);
  const ask = useCallback(
    (r: Omit<ConfirmRequest, 'resolve'>) => new Promise<boolean>((resolve) => setRequest({ ...r, resolve })),
    [],
  );
  const answer = (ok: boolean) => {
    request?.resolve(ok);
    setRequest(undefined);
  };
  return (
    <ConfirmContext.Provider value={ask}>
      {children}
      <dialog ref={dialog} aria-labelledby="confirm-title" onCancel={() => answer(false)}>
        {request && (
          <form
            method="dialog"
            onSubmit={(e) => {
              e.preventDefault();
              answer(true);
            }}
          >
            <h2 id="confirm-title">{request.title}</h2>
            {request.body && <p>{request.body}</p>}
            <div className="actions">
              <button type="button" className="secondary" onClick={() => answer(false)} autoFocus>
                Cancel
              </button>
              <button type="submit" className="danger">
                {request.confirm}
              </button>
            </div>
          </form>
        )}
      </dialog>
    </ConfirmContext.Provider>
  );
}

export const useConfirm = () => useContext(ConfirmContext);

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="secondary small"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        });
      }}
    >
      {done ? 'Copied' : label}
      <span className="visually-hidden" aria-live="polite">
        {done ? ' to the clipboard' : ''}
      </span>
    </button>
  );
}

export function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount} ${currency}`;
  }
}

/** The order in which commissions by status read: what is coming, what is owed, what is done, what is not paid. */
const COMMISSION_STATUS_ORDER = ['pending', 'approved', 'paid', 'on_hold', 'reversed', 'rejected'] as const;

/**
 * Commission amounts by status, as the API sums them (a report's `commissions`): the statuses with
 * an amount, "$27.06 pending · $3.00 approved"; a dash when there is none.
 */
export function CommissionsByStatus({
  totals,
  currency,
}: {
  totals: Record<(typeof COMMISSION_STATUS_ORDER)[number], number>;
  currency: string;
}) {
  const shown = COMMISSION_STATUS_ORDER.filter((s) => totals[s] !== 0);
  if (shown.length === 0) return <>—</>;
  return (
    <span className="by-status">
      {shown.map((s, i) => (
        <span key={s} className="nowrap">
          {i > 0 && <span className="sep"> · </span>}
          {money(totals[s], currency)} {s.replace('_', ' ')}
        </span>
      ))}
    </span>
  );
}

export const date = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }) : '—';
export const dateTime = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '—';

export function Status({ value }: { value: string }) {
  return <span className={`badge badge-${value}`}>{value.replace('_', ' ')}</span>;
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Affiliate dashboard`;
  }, [title]);
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {children && <div className="page-actions">{children}</div>}
    </header>
  );
}
