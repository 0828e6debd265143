/** Prints rows as an aligned text table (the suites' console output). */
export function printTable(title: string, rows: readonly Record<string, string | number | undefined>[]): void {
  if (rows.length === 0) return
  const columns = Object.keys(rows[0] as object)
  const cell = (v: string | number | undefined): string => (v === undefined ? '—' : typeof v === 'number' ? format(v) : v)
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (values: string[]): string => values.map((v, i) => v.padStart(widths[i] as number)).join('  ')
  console.log(`\n${title}`)
  console.log(line(columns))
  console.log(line(widths.map((w) => '-'.repeat(w))))
  for (const row of rows) console.log(line(columns.map((c) => cell(row[c]))))
}

export function format(v: number): string {
  if (!Number.isFinite(v)) return String(v)
  if (Number.isInteger(v)) return String(v)
  const a = Math.abs(v)
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(4)
}
