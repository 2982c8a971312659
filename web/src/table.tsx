import type { ReactNode } from 'react';
import { ApiError } from './api';
import { Field, FormError, Loading, Pager, TableWrap, useLoad, usePages } from './ui';

/** One column of a DataTable: its header, and what a row shows in it. */
export interface Column<T> {
  header: ReactNode;
  /** The header is for screen readers only (an actions column, say). */
  hiddenHeader?: boolean;
  /** This column names the row (`<th scope="row">`). */
  rowHeader?: boolean;
  /**
   * What labels this column's cells on a phone, where each row is a card: default the header when
   * it is text; none for a hidden header (actions), whose cells stand on their own.
   */
  label?: string;
  className?: string;
  cell: (row: T) => ReactNode;
}

/** A page of a server-side list: its rows and the cursor of the next page (null on the last). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * A list paged on the server by cursor: `load` fetches the page at a cursor (with anything else its
 * response carries, kept in `data`); `deps` are the filters (call `pages.reset()` when one changes,
 * so that the list starts again at its first page).
 */
export function usePagedList<P extends Page<unknown>>(
  load: (cursor: string | undefined) => Promise<P>,
  deps: unknown[],
) {
  const pages = usePages();
  const list = useLoad(() => load(pages.cursor), [...deps, pages.cursor]);
  return {
    ...list,
    pages,
    rows: list.data?.items as P['items'] | undefined,
    nextCursor: list.data?.next_cursor ?? null,
  };
}

export type PagedList<T> = ReturnType<typeof usePagedList<Page<T>>>;

/** The text that labels a column's cells in a card (a phone's layout), if any. */
function cardLabel<T>(column: Column<T>): string | undefined {
  if (column.label !== undefined) return column.label;
  if (column.hiddenHeader) return undefined;
  return typeof column.header === 'string' ? column.header : undefined;
}

/**
 * The dashboard's one table: a labelled region, a table on a wide screen and a stack of cards on a
 * phone (each row a card, each cell labelled by its column's header: see `.cards` in styles.css), with the list's
 * loading state, its error, an empty state that says what to do next, and its pages (Previous /
 * Next, on the server's cursors). Rows come from a PagedList, or as they are for a short list the
 * API does not page (`rows`).
 */
export function DataTable<T>(props: {
  label: string;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  empty: ReactNode;
  list?: Pick<PagedList<T>, 'rows' | 'loading' | 'error' | 'pages' | 'nextCursor'>;
  rows?: T[];
  loading?: boolean;
  error?: ApiError;
  /** Fields of the list's filters: an error naming one is shown next to it, not here. */
  errorFields?: string[];
}) {
  const rows = props.list ? props.list.rows : props.rows;
  const loading = props.list ? props.list.loading : (props.loading ?? false);
  const error = props.list ? props.list.error : props.error;
  const firstPage = !props.list || props.list.pages.page === 1;
  return (
    <>
      <FormError error={error} fields={props.errorFields} />
      {rows === undefined ? (
        loading ? (
          <Loading />
        ) : null
      ) : rows.length === 0 && firstPage ? (
        props.empty
      ) : (
        <>
          <TableWrap label={props.label} busy={loading} cards>
            {/* Explicit roles: a browser may drop a table's semantics once CSS makes its parts blocks (the cards). */}
            <thead role="rowgroup">
              <tr role="row">
                {props.columns.map((column, i) => (
                  <th key={i} scope="col" role="columnheader" className={column.className}>
                    {column.hiddenHeader ? <span className="visually-hidden">{column.header}</span> : column.header}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody role="rowgroup">
              {rows.map((row) => (
                <tr key={props.rowKey(row)} role="row">
                  {props.columns.map((column, i) =>
                    column.rowHeader ? (
                      <th key={i} scope="row" role="rowheader" className={column.className}>
                        <div className="cell">{column.cell(row)}</div>
                      </th>
                    ) : (
                      <td key={i} role="cell" className={column.className} data-label={cardLabel(column)}>
                        <div className="cell">{column.cell(row)}</div>
                      </td>
                    ),
                  )}
                </tr>
              ))}
            </tbody>
          </TableWrap>
          {props.list && <Pager pages={props.list.pages} nextCursor={props.list.nextCursor} />}
        </>
      )}
    </>
  );
}

/**
 * A list's filter: a select whose first choice is "every" (''); choosing another value starts the
 * list again at its first page (`onChange` gets it; the caller resets its pages there).
 */
export function FilterSelect<V extends string>(props: {
  label: string;
  name: string;
  value: V | '';
  every: string;
  options: readonly V[];
  /** How an option reads; default: its value, underscores as spaces. */
  optionLabel?: (value: V) => string;
  onChange: (value: V | '') => void;
}) {
  return (
    <Field label={props.label} name={props.name}>
      {(attrs) => (
        <select {...attrs} value={props.value} onChange={(e) => props.onChange(e.target.value as V | '')}>
          <option value="">{props.every}</option>
          {props.options.map((o) => (
            <option key={o} value={o}>
              {props.optionLabel ? props.optionLabel(o) : o.replace('_', ' ')}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
