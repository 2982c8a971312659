/** A successful response with what the SDK knows about it. */
export interface APIResponse<T> {
  /** The method's result (the `data` of the envelope, plus `deduped` on repeatable writes). */
  data: T;
  /** HTTP status (200, or 201 when a record was created). */
  status: number;
  /** The `X-Request-Id` of the request, to quote when asking for support. */
  requestId: string | undefined;
  /** Response headers. */
  headers: Headers;
}

/**
 * The promise every method returns. Await it for the result, or call `.withResponse()` to get the
 * status, request id and headers too. The request is sent at once, whether or not it is awaited.
 */
export class APIPromise<T> extends Promise<T> {
  #response: Promise<APIResponse<T>>;
  #data: Promise<T> | undefined;

  constructor(response: Promise<APIResponse<T>>) {
    // The executor's value is never observed: then/catch/finally read #response instead.
    super((resolve) => resolve(null as T));
    this.#response = response;
  }

  // Derived promises (`.then(...)` results) are plain Promises, not APIPromises.
  static override get [Symbol.species]() {
    return Promise;
  }

  /** The result together with status, request id and headers. */
  withResponse(): Promise<APIResponse<T>> {
    return this.#response;
  }

  #result(): Promise<T> {
    this.#data ??= this.#response.then((r) => r.data);
    return this.#data;
  }

  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#result().then(onfulfilled, onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#result().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#result().finally(onfinally);
  }
}
