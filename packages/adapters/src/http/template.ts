/**
 * google.api.http path templates: `/v1beta/{name=corpora/*}:query` matches a path and binds
 * `name` (a field path such as `corpus.name`) to the matched segments.
 */
export interface CompiledTemplate {
  readonly regex: RegExp
  readonly fields: readonly string[]
  /**
   * Whether `path` matches: the template's literal pieces (the text between its wildcards) are
   * looked for first, in order — the path starts with the first and ends with the last — so most
   * routes fail without running the regex.
   */
  readonly test: (path: string) => boolean
}

/** A template with its variables replaced by their segments (`/v1beta/{name=corpora/*}:query` → `/v1beta/corpora/*:query`). */
export function templateGlob(template: string): string {
  return template.replace(/\{[^}=]*(?:=([^}]*))?\}/g, (_all, segments: string | undefined) => segments ?? '*')
}

/** The literal text between a template's wildcards (`*`, `**`), in order: what any path it matches contains. */
function literalPieces(template: string): string[] {
  return templateGlob(template).split(/\*\*?/)
}

export function compileTemplate(template: string): CompiledTemplate {
  const fields: string[] = []
  let pattern = ''
  let i = 0
  while (i < template.length) {
    const open = template.indexOf('{', i)
    if (open < 0) {
      pattern += escape(template.slice(i))
      break
    }
    pattern += escape(template.slice(i, open))
    const close = template.indexOf('}', open)
    const [field = '', segments = '*'] = template.slice(open + 1, close).split('=')
    fields.push(field)
    pattern += `(${segments
      .split('/')
      .map((s) => (s === '**' ? '.+' : s === '*' ? '[^/:]+' : escape(s)))
      .join('/')})`
    i = close + 1
  }
  const regex = new RegExp(`^${pattern}$`)
  const pieces = literalPieces(template)
  const head = pieces[0] ?? ''
  const tail = pieces[pieces.length - 1] ?? ''
  const middle = pieces.slice(1, -1).filter((piece) => piece !== '')
  const test = (path: string): boolean => {
    if (!path.startsWith(head) || !path.endsWith(tail)) return false
    let at = head.length
    for (const piece of middle) {
      const found = path.indexOf(piece, at)
      if (found < 0) return false
      at = found + piece.length
    }
    return regex.test(path)
  }
  return { regex, fields, test }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Sets `request.a.b = value` for the field path `a.b`. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  if (!path.includes('.')) {
    target[path] = value
    return
  }
  const parts = path.split('.')
  let node = target
  for (const part of parts.slice(0, -1)) {
    const next = node[part]
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {}
    node = node[part] as Record<string, unknown>
  }
  node[parts[parts.length - 1] as string] = value
}
