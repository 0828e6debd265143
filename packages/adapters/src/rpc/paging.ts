import { invalidArgument } from './status.js'

/**
 * List paging: resources are listed in creation order (a sequence number every resource gets
 * when created), and a page token is a cursor — "after sequence N, in list L" — so pages neither
 * skip nor repeat a resource when others are created or deleted between calls. A token names the
 * list it came from (method and parent); another list refuses it.
 */
export interface PageRequest {
  readonly pageSize?: number
  readonly pageToken?: string
}

interface PageLimits {
  /** Page size when the request gives none (or 0). */
  readonly defaultSize: number
  /** Larger requests are served this many, as Google's lists do. */
  readonly maxSize: number
}

export interface Page<T> {
  readonly items: T[]
  readonly nextPageToken: string | undefined
}

function encode(list: string, cursor: { readonly a: number } | { readonly k: readonly number[] }): string {
  return Buffer.from(JSON.stringify({ l: list, ...cursor }), 'utf8').toString('base64url')
}

/** A token's cursor, checked to come from `list` and to pass `valid`; INVALID_ARGUMENT otherwise. */
function decode<C>(token: string, list: string, valid: (cursor: Record<string, unknown>) => cursor is Record<string, unknown> & C): C {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'))
  } catch {
    parsed = undefined
  }
  const p = parsed as Record<string, unknown> | undefined
  if (typeof p !== 'object' || p === null || typeof p['l'] !== 'string' || !valid(p)) {
    throw invalidArgument('pageToken', 'Invalid page token: pass the nextPageToken of the previous response unchanged.')
  }
  if (p['l'] !== list) {
    throw invalidArgument('pageToken', `Invalid page token: it belongs to another list (${String(p['l'])}); a token only continues the list call that returned it.`)
  }
  return p
}

const isSeqCursor = (p: Record<string, unknown>): p is { a: number } => typeof p['a'] === 'number' && Number.isSafeInteger(p['a'])
const isKeyCursor = (p: Record<string, unknown>): p is { k: number[] } => Array.isArray(p['k']) && p['k'].length <= 8 && p['k'].every((x) => typeof x === 'number' && Number.isSafeInteger(x))

/** The items of `all` (sorted) past the first `passed` ones (found by bisection: `passed(item)` holds for a prefix), `size` of them. */
function after<T>(all: readonly T[], passed: ((item: T) => boolean) | undefined, size: number): { items: T[]; more: boolean } {
  let lo = 0
  let hi = passed === undefined ? 0 : all.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((passed as (item: T) => boolean)(all[mid] as T)) lo = mid + 1
    else hi = mid
  }
  const items = all.slice(lo, lo + size)
  return { items, more: lo + size < all.length && items.length > 0 }
}

/** The page size a request asks for, after defaults and the maximum (negative sizes are refused). */
function pageSizeOf(request: PageRequest, limits: PageLimits): number {
  const size = request.pageSize ?? 0
  if (size < 0) throw invalidArgument('pageSize', `pageSize must be positive (or 0 for the default of ${limits.defaultSize}); received ${size}.`)
  return size === 0 ? limits.defaultSize : Math.min(size, limits.maxSize)
}

/**
 * One page of `all` (sorted by `seqOf` ascending) for `list` (e.g. "listDocuments corpora/c").
 * Items are scanned only past the cursor.
 */
export function pageOf<T>(all: readonly T[], seqOf: (item: T) => number, list: string, request: PageRequest, limits: PageLimits): Page<T> {
  const size = pageSizeOf(request, limits)
  const cursor = request.pageToken === undefined || request.pageToken === '' ? undefined : decode(request.pageToken, list, isSeqCursor).a
  const { items, more } = after(all, cursor === undefined ? undefined : (item) => seqOf(item) <= cursor, size)
  const last = items[items.length - 1]
  return { items, nextPageToken: more && last !== undefined ? encode(list, { a: seqOf(last) }) : undefined }
}

/** Composite keys compared component by component, `desc[i]` reversing component i (a missing one reads as 0). */
function compareKeys(a: readonly number[], b: readonly number[], desc: readonly boolean[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0)
    if (d !== 0) return desc[i] === true ? -d : d
  }
  return 0
}

/**
 * One page of `all`, sorted by a composite key (`keyOf`: numbers compared in turn, `desc[i]`
 * reversing component i; the last component unique, a sequence number), for lists a request may
 * order (`orderBy`). The token is a cursor on the last key returned — "after this key, in list L" —
 * so, as with `pageOf`, creations and deletions between calls neither skip nor repeat an item
 * whose key did not change.
 */
export function pageByKey<T>(all: readonly T[], keyOf: (item: T) => readonly number[], desc: readonly boolean[], list: string, request: PageRequest, limits: PageLimits): Page<T> {
  const size = pageSizeOf(request, limits)
  const cursor = request.pageToken === undefined || request.pageToken === '' ? undefined : decode(request.pageToken, list, isKeyCursor).k
  const { items, more } = after(all, cursor === undefined ? undefined : (item) => compareKeys(keyOf(item), cursor, desc) <= 0, size)
  const last = items[items.length - 1]
  return { items, nextPageToken: more && last !== undefined ? encode(list, { k: keyOf(last) }) : undefined }
}

/**
 * `pageByKey` over items in any order, the key given by its components (`parts`): the page's
 * `size` + 1 first keys past the cursor are picked in one pass, in a heap whose root is the last
 * of them (n log size at most), instead of sorting every item; an item that cannot make the page
 * is passed over without making its key. Same items, order and token
 * as `pageByKey` over the items sorted (keys are unique: their last component is a seq).
 */
export function pageByKeyUnsorted<T>(all: readonly T[], parts: readonly ((item: T) => number)[], desc: readonly boolean[], list: string, request: PageRequest, limits: PageLimits): Page<T> {
  const size = pageSizeOf(request, limits)
  // The item against a key: < 0 when the item comes first.
  const against = (item: T, key: readonly number[]): number => {
    for (let i = 0; i < parts.length; i++) {
      const d = (parts[i] as (item: T) => number)(item) - (key[i] ?? 0)
      if (d !== 0) return desc[i] === true ? -d : d
    }
    return 0
  }
  const cursor = request.pageToken === undefined || request.pageToken === '' ? undefined : decode(request.pageToken, list, isKeyCursor).k
  type Kept = { readonly item: T; readonly key: readonly number[] }
  const heap: Kept[] = []
  const at = (i: number): Kept => heap[i] as Kept
  const later = (i: number, j: number): boolean => compareKeys(at(i).key, at(j).key, desc) > 0
  const swap = (i: number, j: number): void => {
    const kept = at(i)
    heap[i] = at(j)
    heap[j] = kept
  }
  // Items in about the reverse of the asked order (a list kept newest first, asked oldest first)
  // are read from the end: in the asked order the heap fills once and every later item is passed
  // over at one comparison, where in its reverse every item would go through the heap.
  const head = all[0]
  const tail = all[all.length - 1]
  const backwards = head !== undefined && tail !== undefined && against(head, parts.map((p) => p(tail))) > 0
  for (let n = 0; n < all.length; n++) {
    const item = all[backwards ? all.length - 1 - n : n] as T
    if (cursor !== undefined && against(item, cursor) <= 0) continue
    if (heap.length > size && against(item, at(0).key) >= 0) continue
    const entry = { item, key: parts.map((p) => p(item)) }
    if (heap.length <= size) {
      // Up from the last leaf while it comes after its parent.
      heap.push(entry)
      for (let i = heap.length - 1; i > 0 && later(i, (i - 1) >> 1); i = (i - 1) >> 1) swap(i, (i - 1) >> 1)
      continue
    }
    // The last kept key gives way: down from the root to where the new one belongs.
    heap[0] = entry
    for (let i = 0; ; ) {
      const left = 2 * i + 1
      const right = left + 1
      let top = i
      if (left < heap.length && later(left, top)) top = left
      if (right < heap.length && later(right, top)) top = right
      if (top === i) break
      swap(i, top)
      i = top
    }
  }
  const kept = heap.sort((a, b) => compareKeys(a.key, b.key, desc))
  const items = kept.slice(0, size)
  const last = items[items.length - 1]
  return { items: items.map((k) => k.item), nextPageToken: kept.length > size && last !== undefined ? encode(list, { k: last.key }) : undefined }
}
