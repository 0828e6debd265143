import { readFileSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { Outcome } from '@quarry/adapters'

/**
 * Golden request/response pairs: a scenario is a list of calls on one fresh engine, each with the
 * exact response JSON or google.rpc.Status it must produce. `UPDATE_GOLDEN=1` rewrites the
 * expectations from the current code (review the diff before committing it).
 */
export interface GoldenStep {
  readonly call: string
  readonly note?: string
  /** API surface, where an engine serves several (RAG Engine: v1, v1beta1). */
  readonly version?: string
  /** Upload content, for methods that take a file besides the request. */
  readonly content?: string
  /** Values to remember from the outcome for later requests: name → dotted path (`response.name`); use as "{{name}}". */
  readonly save?: Readonly<Record<string, string>>
  readonly request: unknown
  response?: unknown
  error?: unknown
}

export interface GoldenScenario {
  readonly name: string
  readonly options?: Record<string, unknown>
  readonly steps: GoldenStep[]
}

export function loadGolden(path: string): GoldenScenario[] {
  return (JSON.parse(readFileSync(path, 'utf8')) as { scenarios: GoldenScenario[] }).scenarios
}

export const updating = process.env.UPDATE_GOLDEN === '1'

export function saveGolden(path: string, scenarios: readonly GoldenScenario[]): void {
  writeFileSync(path, `${JSON.stringify({ scenarios }, null, 2)}\n`)
}

/**
 * One test per scenario of `scenarios` (read from `path`): each runs its steps on a fresh engine
 * from `engine(scenario.options)`, values saved by a step usable in the next; with UPDATE_GOLDEN=1
 * the file is rewritten afterwards.
 */
export function describeGolden(title: string, path: string, scenarios: readonly GoldenScenario[], engine: (options: GoldenScenario['options']) => GoldenCall): void {
  describe(title, () => {
    for (const scenario of scenarios) {
      it(scenario.name, async () => {
        const call = engine(scenario.options)
        const vars = new Map<string, string>()
        for (const step of scenario.steps) await runStep(step, call, vars)
      })
    }
    if (updating) it('saves the updated expectations', () => saveGolden(path, scenarios))
  })
}

/** Fields that are proto maps: their keys are user data, not field names. */
const MAP_FIELDS = new Set(['scope', 'metadata'])

/**
 * proto3 JSON never carries null or undefined, an empty list or an empty string is omitted (no
 * string field of the three APIs has presence; a map's values may be empty), field names are
 * lowerCamelCase.
 */
export function expectProto3Json(value: unknown, path = '$', isMap = false, mapValue = false): void {
  if (value === null || value === undefined) throw new Error(`${path} is ${String(value)}`)
  if (value === '' && !mapValue) throw new Error(`${path} is an empty string (omit it)`)
  if (Array.isArray(value)) {
    if (value.length === 0) throw new Error(`${path} is an empty list (omit it)`)
    value.forEach((v, i) => expectProto3Json(v, `${path}[${i}]`))
  } else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (!isMap && /_/.test(k)) throw new Error(`${path}.${k} is not lowerCamelCase`)
      expectProto3Json(v, `${path}.${k}`, !isMap && MAP_FIELDS.has(k), isMap)
    }
  }
}

function substitute(value: unknown, vars: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (m, k: string) => vars.get(k) ?? m)
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars))
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]))
  return value
}

export type GoldenCall = (step: GoldenStep, request: unknown) => Promise<Outcome<unknown>>

/** Runs one step against `call` and checks (or records) its outcome; `vars` carries saved values between steps. */
export async function runStep(step: GoldenStep, call: GoldenCall, vars: Map<string, string> = new Map()): Promise<void> {
  const outcome = await call(step, substitute(step.request, vars))
  for (const [name, path] of Object.entries(step.save ?? {})) {
    // `a.b.0.name`, or `a.b.0.name|last` for the last segment of a resource name (its id).
    const [dotted = '', transform] = path.split('|')
    let v: unknown = outcome
    for (const part of dotted.split('.')) v = (v as Record<string, unknown> | undefined)?.[part]
    if (typeof v !== 'string') throw new Error(`${step.call}: nothing to save at ${path}`)
    vars.set(name, transform === 'last' ? (v.split('/').pop() as string) : v)
  }
  const json = JSON.parse(JSON.stringify(outcome)) as Outcome<unknown>
  expect(json, 'the outcome survives JSON unchanged').toEqual(outcome)
  if (outcome.ok) expectProto3Json(outcome.response)
  if (updating) {
    delete step.response
    delete step.error
    if (json.ok) step.response = json.response
    else step.error = json.status
    return
  }
  const label = `${step.call} ${step.note ?? ''}`
  if (step.error !== undefined) expect(json, label).toEqual({ ok: false, status: step.error })
  else expect(json, label).toEqual({ ok: true, response: step.response })
}
