import { APIPromise, type APIResponse } from './api-promise.js';

/** Fetches the page at `cursor` (undefined: the first page). */
export type PageFetcher<Item> = (cursor: string | undefined) => Promise<APIResponse<Page<Item>>>;

/**
 * One page of a list. `for await (const item of page)` iterates over this page's items and then
 * every following page's, fetching them as it goes.
 */
export class Page<Item> implements AsyncIterable<Item> {
  /** The items of this page. */
  readonly data: Item[];
  /** The cursor of the next page; null on the last page. */
  readonly nextCursor: string | null;
  readonly #fetch: PageFetcher<Item>;

  constructor(data: Item[], nextCursor: string | null, fetch: PageFetcher<Item>) {
    this.data = data;
    this.nextCursor = nextCursor;
    this.#fetch = fetch;
  }

  hasNextPage(): boolean {
    return this.nextCursor !== null;
  }

  /** The next page; throws when this is the last one (check `hasNextPage()` first). */
  async getNextPage(): Promise<Page<Item>> {
    if (this.nextCursor === null) throw new Error('No next page: check hasNextPage() before calling getNextPage()');
    return (await this.#fetch(this.nextCursor)).data;
  }

  /** This page and every following one. */
  async *iterPages(): AsyncGenerator<Page<Item>, void, undefined> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the walk starts at this page and moves on to the following ones
    let page: Page<Item> = this;
    yield page;
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.iterPages()) yield* page.data;
  }
}

/**
 * What `list()` returns: await it for the first page, or iterate over it with `for await` to walk
 * every item of every page.
 */
export class PagePromise<Item> extends APIPromise<Page<Item>> implements AsyncIterable<Item> {
  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    const page = await this;
    yield* page;
  }
}
