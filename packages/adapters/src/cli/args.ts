import { usageError } from './fail.js'

/** The options a command takes. */
interface ArgSpec {
  /** Options taking a value: `--name value` or `--name=value`. */
  readonly values: readonly string[]
  /** Those of `values` that may be given more than once. @defaultValue none */
  readonly repeatable?: readonly string[]
  /** Options without a value. `--help` / `-h` are always known. @defaultValue none */
  readonly switches?: readonly string[]
  /** Whether the command takes bare arguments (after `--`, everything is one). */
  readonly positionals: boolean
}

interface ParsedArgs {
  readonly positionals: readonly string[]
  /** The value of an option given at most once. */
  value(name: string): string | undefined
  /** Every value of a repeatable option, in order. */
  all(name: string): readonly string[]
  /** Whether a switch (or --help) was given. */
  has(name: string): boolean
}

/** Reads a command's arguments against its spec; unknown, repeated or valueless options are usage errors. */
export function parseArgs(args: readonly string[], spec: ArgSpec, usage: string): ParsedArgs {
  const values = new Map<string, string[]>()
  const switches = new Set<string>()
  const positionals: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (arg === '--') {
      positionals.push(...args.slice(i + 1))
      break
    }
    if (arg === '-h' || arg === '--help') {
      switches.add('help')
      continue
    }
    if (!arg.startsWith('--') || arg === '-') {
      if (!spec.positionals) throw usageError(`unexpected argument "${arg}"`, usage)
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq)
    if (spec.switches?.includes(name)) {
      if (eq >= 0) throw usageError(`--${name} takes no value`, usage)
      switches.add(name)
      continue
    }
    if (!spec.values.includes(name)) throw usageError(`unknown option --${name}`, usage)
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i]
    if (value === undefined) throw usageError(`--${name} needs a value`, usage)
    const seen = values.get(name) ?? []
    if (seen.length > 0 && !spec.repeatable?.includes(name)) throw usageError(`--${name} is given twice`, usage)
    values.set(name, [...seen, value])
  }
  return {
    positionals,
    value: (name) => values.get(name)?.[0],
    all: (name) => values.get(name) ?? [],
    has: (name) => switches.has(name),
  }
}

/** A number option within [min, max] (integers only when `integer`), or its default. */
export function numberOption(parsed: ParsedArgs, name: string, options: { min: number; max: number; integer: boolean; fallback: number }, usage: string): number {
  const raw = parsed.value(name)
  if (raw === undefined) return options.fallback
  const n = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(n) || n < options.min || n > options.max || (options.integer && !Number.isInteger(n))) {
    throw usageError(`--${name} must be ${options.integer ? 'an integer' : 'a number'} from ${options.min} to ${options.max}; received ${raw}`, usage)
  }
  return n
}

/**
 * One option of a command, as its help shows it: the parser's spec and the help's option lines
 * are both made from a list of these ({@link specOf}, {@link optionLines}), so they cannot drift.
 */
export interface OptionDoc {
  readonly name: string
  /** The value's placeholder (`DIR`, `N`); none for a switch. */
  readonly value?: string
  /** Whether it may be given more than once. @defaultValue false */
  readonly repeatable?: boolean
  /** What it does; lines after the first are indented under it. */
  readonly help: string
}

/** The parser's spec of a command's options. */
export function specOf(options: readonly OptionDoc[], positionals: boolean): ArgSpec {
  return {
    values: options.filter((o) => o.value !== undefined).map((o) => o.name),
    repeatable: options.filter((o) => o.repeatable === true).map((o) => o.name),
    switches: options.filter((o) => o.value === undefined).map((o) => o.name),
    positionals,
  }
}

/** The options' help lines: `--name VALUE  text`, aligned, continuation lines indented. */
export function optionLines(options: readonly OptionDoc[]): string {
  const heads = options.map((o) => `--${o.name}${o.value === undefined ? '' : ` ${o.value}`}`)
  const width = Math.max(...heads.map((h) => h.length))
  return options
    .map((o, i) => {
      const [first, ...rest] = o.help.split('\n')
      return [`  ${(heads[i] as string).padEnd(width)}  ${first ?? ''}`, ...rest.map((line) => `  ${' '.repeat(width)}  ${line}`)].join('\n')
    })
    .join('\n')
}
