import type { HttpVerb, UploadContent } from '../rpc/methods.js'
import type { Outcome } from '../rpc/outcome.js'
import type { BoundMethod } from '../transport/bound-methods.js'
import type { EnumRules } from '../transport/enums.js'
import { compileTemplate, type CompiledTemplate } from './template.js'

type HttpMethod = HttpVerb

/** One REST binding of a method: its HTTP method and path template (as in the google.api.http annotations), and where the body goes. */
export interface Route {
  readonly method: HttpMethod
  readonly template: string
  /** `*`: the body is the request; a field name: the body is that field; absent: no body. */
  readonly body?: string
  /** The RPC it serves (`google.ai.generativelanguage.v1beta.RetrieverService.CreateCorpus`). */
  readonly rpc: string
  readonly call: (request: Record<string, unknown>, upload: UploadContent | undefined) => Promise<Outcome<unknown>>
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
        call: (request, upload) => bound.call(request, upload),
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

/** How many `/` a path or template holds. */
function slashes(text: string): number {
  let n = 0
  for (let i = text.indexOf('/'); i >= 0; i = text.indexOf('/', i + 1)) n++
  return n
}

/**
 * The routes whose template matches a path, in table order. A template without `**` matches only
 * paths with as many `/` as it has (its variables' segments hold none), so routes are grouped by
 * that count and a path is tested against its group and the `**` routes alone: a fraction of the
 * regexes a scan of all of them runs, which was most of a small read's routing.
 */
export function routeMatcher(routes: readonly Route[]): (path: string) => Route[] {
  const bySlashes = new Map<number, Route[]>()
  const anyDepth: Route[] = []
  const order = new Map<Route, number>(routes.map((route, i) => [route, i]))
  for (const route of routes) {
    if (route.template.includes('**')) anyDepth.push(route)
    else {
      const n = slashes(route.template)
      const group = bySlashes.get(n) ?? []
      group.push(route)
      bySlashes.set(n, group)
    }
  }
  return (path) => {
    const found: Route[] = []
    for (const route of bySlashes.get(slashes(path)) ?? []) if (route.compiled.test(path)) found.push(route)
    const fixed = found.length
    for (const route of anyDepth) if (route.compiled.test(path)) found.push(route)
    // Both kinds matched: back to table order.
    if (fixed > 0 && found.length > fixed) found.sort((x, y) => (order.get(x) ?? 0) - (order.get(y) ?? 0))
    return found
  }
}
