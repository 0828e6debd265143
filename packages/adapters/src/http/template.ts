/**
 * google.api.http path templates: `/v1beta/{name=corpora/*}:query` matches a path and binds
 * `name` (a field path such as `corpus.name`) to the matched segments.
 */
export interface CompiledTemplate {
  readonly regex: RegExp
  readonly fields: readonly string[]
  /**
   * Whether `path` matches: the literal text before the first variable and after the last one
   * are compared first (most routes fail there, without running the regex).
   */
  readonly test: (path: string) => boolean
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
  const first = template.indexOf('{')
  const head = first < 0 ? template : template.slice(0, first)
  const tail = first < 0 ? template : template.slice(template.lastIndexOf('}') + 1)
  return { regex, fields, test: (path) => path.startsWith(head) && path.endsWith(tail) && regex.test(path) }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Sets `request.a.b = value` for the field path `a.b`. */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.')
  let node = target
  for (const part of parts.slice(0, -1)) {
    const next = node[part]
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {}
    node = node[part] as Record<string, unknown>
  }
  node[parts[parts.length - 1] as string] = value
}
