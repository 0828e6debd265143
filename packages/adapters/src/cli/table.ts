/** Renders rows as an aligned plain-text table for the terminal (terminal styling does not count toward widths). */
export function renderTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : cell)))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => visibleLength(row[i] ?? ''))))
  const fmt = (row: readonly string[]): string =>
    row
      .map((cell, i) => cell + ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(cell))))
      .join('  ')
      .trimEnd()
  return [fmt(headers), fmt(widths.map((w) => '-'.repeat(w))), ...cells.map(fmt)].join('\n')
}

/** A score column's header saying which way it goes: `score (higher is better)`. */
export function scoreHeader(name: string, better: 'lower' | 'higher'): string {
  return `${name} (${better} is better)`
}

function visibleLength(cell: string): number {
  return cell.replace(/\x1b\[[0-9;]*m/g, '').length
}

function formatNumber(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(4)
}
