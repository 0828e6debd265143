import { TRANSPORT_CALL, type HttpVerb, type UploadContent } from '../rpc/methods.js'
import type { Outcome } from '../rpc/outcome.js'
import type { BoundMethod } from '../transport/bound-methods.js'
import type { EnumRules } from '../transport/enums.js'
import { compileTemplate, templateGlob, type CompiledTemplate } from './template.js'

type HttpMethod = HttpVerb

/** One REST binding of a method: its HTTP method and path template (as in the google.api.http annotations), and where the body goes. */
export interface Route {
  readonly method: HttpMethod
  readonly template: string
  /** `*`: the body is the request; a field name: the body is that field; absent: no body. */
  readonly body?: string
  /** The RPC it serves (`google.ai.generativelanguage.v1beta.RetrieverService.CreateCorpus`). */
  readonly rpc: string
  /** `signal`: aborted once the client has gone (a write still waiting for its turn is then not applied). */
  readonly call: (request: Record<string, unknown>, upload: UploadContent | undefined, signal: { readonly aborted: boolean }) => Promise<Outcome<unknown>>
  readonly enums: EnumRules
  /** A multipart upload (`metadata` JSON part + `file` part). */
  readonly multipart?: boolean
  /** A server-streaming RPC: its answer is sent as a stream of messages (HttpBinding.stream). */
  readonly stream?: boolean
  readonly compiled: CompiledTemplate
  /** Whether a success changes state: the method table's `write` (reads and queries do not). */
  readonly mutates: boolean
}

/** The REST routes of bound methods: one per google.api.http binding, below the method's version prefix. */
export function restRoutes(methods: readonly BoundMethod[]): Route[] {
  return methods.flatMap((bound) =>
    bound.http.map((binding): Route => {
      const template = `${binding.media ? '/upload' : ''}/${binding.prefix ?? bound.version}/${binding.path}`
      return {
        method: binding.verb,
        template,
        rpc: `${bound.service}.${bound.rpc}`,
        call: (request, upload, signal) => bound.call(request, upload, { ...TRANSPORT_CALL, signal }),
        enums: bound.enums,
        ...(binding.body === undefined ? {} : { body: binding.body }),
        ...(binding.media ? { multipart: true } : {}),
        ...(binding.stream ? { stream: true } : {}),
        compiled: compileTemplate(template),
        mutates: bound.mutates,
      }
    }),
  )
}

/** The routes of one template (the methods bound to the same path), tested once per path. */
interface Shape {
  readonly compiled: CompiledTemplate
  readonly routes: Route[]
}

/** A trie over path segments: literal segments by text, `*` segments by their custom verb (`:query`, or ''). */
interface Node {
  readonly literal: Map<string, Node>
  readonly star: Map<string, Node>
  readonly shapes: Shape[]
}

const node = (): Node => ({ literal: new Map(), star: new Map(), shapes: [] })
const NO_ROUTES: readonly Route[] = []

/** A segment's custom verb: from its first `:` on, or ''. */
function verbOf(segment: string): string {
  const colon = segment.indexOf(':')
  return colon < 0 ? '' : segment.slice(colon)
}

/**
 * The routes whose template matches a path, in table order. A template without `**` is a fixed
 * list of segments — literal text, or a `*` with perhaps a custom verb (`{name=corpora/*}:query`) —
 * so those templates form a trie the path walks segment by segment; `**` templates (and any whose
 * segments mix text and a wildcard) are tested when the path ends with their literal tail. Only the
 * templates found that way run their regex, once for all the methods bound to them.
 */
export function routeMatcher(routes: readonly Route[]): (path: string) => readonly Route[] {
  const order = new Map<Route, number>(routes.map((route, i) => [route, i]))
  const shapes = new Map<string, Shape>()
  for (const route of routes) {
    const shape = shapes.get(route.template) ?? { compiled: route.compiled, routes: [] }
    shape.routes.push(route)
    shapes.set(route.template, shape)
  }
  const root = node()
  const byTail = new Map<string, Shape[]>()
  for (const [template, shape] of shapes) {
    const segments = templateGlob(template).split('/')
    if (!segments.every((segment) => !segment.includes('*') || /^\*(?::[^*]*)?$/.test(segment))) {
      const tail = template.slice(template.lastIndexOf('}') + 1)
      if (!/^(?:[/:][^/:]*)?$/.test(tail)) throw new Error(`REST template ${template}: a "**" template's literal tail must be '', "/name" or ":verb"`)
      byTail.set(tail, [...(byTail.get(tail) ?? []), shape])
      continue
    }
    let at = root
    for (const segment of segments) {
      const [children, key] = segment.startsWith('*') ? [at.star, segment.slice(1)] : [at.literal, segment]
      const next = children.get(key) ?? node()
      children.set(key, next)
      at = next
    }
    at.shapes.push(shape)
  }
  // A tail is '' or one "/name" or ":verb": the path's text from its last "/" or its last ":" (none other holds a literal tail).
  const tailsOf = (path: string): readonly Shape[][] => {
    const slash = path.lastIndexOf('/')
    const colon = path.lastIndexOf(':')
    return [byTail.get('') ?? [], byTail.get(path.slice(slash)) ?? [], colon > slash ? (byTail.get(path.slice(colon)) ?? []) : []]
  }
  const walk = (at: Node, segments: readonly string[], i: number, found: Shape[]): void => {
    if (i === segments.length) {
      found.push(...at.shapes)
      return
    }
    const segment = segments[i] as string
    const literal = at.literal.get(segment)
    if (literal !== undefined) walk(literal, segments, i + 1, found)
    const star = segment === '' ? undefined : at.star.get(verbOf(segment))
    if (star !== undefined) walk(star, segments, i + 1, found)
  }
  const find = (path: string): readonly Route[] => {
    const candidates: Shape[] = []
    walk(root, path.split('/'), 0, candidates)
    for (const list of tailsOf(path)) candidates.push(...list)
    let one: Shape | undefined
    let more: Route[] | undefined
    for (const shape of candidates) {
      if (!shape.compiled.test(path)) continue
      if (one === undefined) one = shape
      else (more ??= [...one.routes]).push(...shape.routes)
    }
    if (one === undefined) return NO_ROUTES
    // One template: its routes are in table order already; several: back to table order.
    return more === undefined ? one.routes : more.sort((x, y) => (order.get(x) ?? 0) - (order.get(y) ?? 0))
  }
  // Clients ask the same paths again and again (an operation polled, a list paged, one corpus
  // queried): the routes of the last RECENT_PATHS are kept, and found with one lookup.
  const recent = new Map<string, readonly Route[]>()
  return (path) => {
    const known = recent.get(path)
    if (known !== undefined) return known
    const routes = find(path)
    if (path.length <= RECENT_PATH_CHARS) {
      if (recent.size >= RECENT_PATHS) recent.clear()
      recent.set(path, routes)
    }
    return routes
  }
}

/** Paths whose routes {@link routeMatcher} keeps (forgotten all at once when full), and the longest it keeps. */
const RECENT_PATHS = 1024
const RECENT_PATH_CHARS = 512
