/** Renders rows as an aligned plain-text table for the terminal. */
export function renderTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : cell)))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => (row[i] ?? '').length)))
  const fmt = (row: readonly string[]): string => row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()
  return [fmt(headers), fmt(widths.map((w) => '-'.repeat(w))), ...cells.map(fmt)].join('\n')
}

function formatNumber(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(4)
}
