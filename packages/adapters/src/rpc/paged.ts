import { unary } from './unary.js'
import type { Outcome } from './outcome.js'

/** Call options of a paged method, as google-gax takes them. */
export interface PageCallOptions {
  /** true: fetch every page and resolve to all resources; false: one page. @defaultValue true */
  readonly autoPaginate?: boolean
}

type ListResponse = { readonly nextPageToken?: string }

/**
 * A Google Node client's paged method: `[resources, nextRequest | null, rawResponse]`. With
 * autoPaginate (the default) every page is fetched and concatenated, and nextRequest is null.
 */
export async function paged<R extends ListResponse, T>(
  call: (request: Record<string, unknown>) => Promise<Outcome<R>>,
  itemsOf: (response: R) => readonly T[] | undefined,
  request: unknown,
  options: PageCallOptions = {},
): Promise<[T[], Record<string, unknown> | null, R]> {
  let req = { ...((request ?? {}) as Record<string, unknown>) }
  const all: T[] = []
  for (;;) {
    const [response] = await unary(call(req))
    all.push(...(itemsOf(response) ?? []))
    const next = response.nextPageToken ? { ...req, pageToken: response.nextPageToken } : null
    if (options.autoPaginate === false || next === null) return [all, next, response]
    req = next
  }
}

/** A Google Node client's `listXAsync`: an async iterable over every resource, page by page. */
export async function* pagedAsync<R extends ListResponse, T>(
  call: (request: Record<string, unknown>) => Promise<Outcome<R>>,
  itemsOf: (response: R) => readonly T[] | undefined,
  request: unknown,
): AsyncGenerator<T, void, undefined> {
  let req = { ...((request ?? {}) as Record<string, unknown>) }
  for (;;) {
    const [response] = await unary(call(req))
    yield* itemsOf(response) ?? []
    if (!response.nextPageToken) return
    req = { ...req, pageToken: response.nextPageToken }
  }
}
