/** A dependency-free SVG line chart: one panel per dataset, one line per series (the benchmarks' plots, `quarry eval`). */
export interface Series {
  name: string
  points: { x: number; y: number }[]
}

export interface Panel {
  title: string
  xLabel: string
  yLabel: string
  logY?: boolean
  series: Series[]
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2']
const W = 420
const H = 320
const M = { left: 60, right: 15, top: 30, bottom: 45 }

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;')
}

function panel(p: Panel, ox: number, names: string[]): string {
  const pts = p.series.flatMap((s) => s.points).filter((q) => Number.isFinite(q.x) && Number.isFinite(q.y) && (!p.logY || q.y > 0))
  if (pts.length === 0) return ''
  const fy = (y: number): number => (p.logY ? Math.log10(y) : y)
  let x0 = Math.min(...pts.map((q) => q.x))
  let x1 = Math.max(...pts.map((q) => q.x))
  let y0 = Math.min(...pts.map((q) => fy(q.y)))
  let y1 = Math.max(...pts.map((q) => fy(q.y)))
  if (x1 === x0) x1 = x0 + 1
  if (y1 === y0) y1 = y0 + 1
  const padY = (y1 - y0) * 0.05
  y0 -= padY
  y1 += padY
  x0 = Math.max(0, x0 - (x1 - x0) * 0.02)
  const sx = (x: number): number => ox + M.left + ((x - x0) / (x1 - x0)) * (W - M.left - M.right)
  const sy = (y: number): number => M.top + (1 - (fy(y) - y0) / (y1 - y0)) * (H - M.top - M.bottom)
  const out: string[] = []
  out.push(`<text x="${ox + W / 2}" y="18" text-anchor="middle" font-weight="bold">${esc(p.title)}</text>`)
  out.push(`<rect x="${ox + M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${H - M.top - M.bottom}" fill="none" stroke="#999"/>`)
  for (let i = 0; i <= 4; i++) {
    const xv = x0 + ((x1 - x0) * i) / 4
    out.push(`<text x="${sx(xv)}" y="${H - M.bottom + 15}" text-anchor="middle" font-size="10">${xv.toFixed(3)}</text>`)
    const yv = y0 + ((y1 - y0) * i) / 4
    const label = p.logY ? Math.round(10 ** yv).toString() : yv.toFixed(2)
    const yy = M.top + (1 - i / 4) * (H - M.top - M.bottom)
    out.push(`<text x="${ox + M.left - 5}" y="${yy + 3}" text-anchor="end" font-size="10">${label}</text>`)
    out.push(`<line x1="${ox + M.left}" x2="${ox + W - M.right}" y1="${yy}" y2="${yy}" stroke="#eee"/>`)
  }
  out.push(`<text x="${ox + W / 2}" y="${H - 8}" text-anchor="middle" font-size="11">${esc(p.xLabel)}</text>`)
  out.push(`<text transform="translate(${ox + 14},${H / 2}) rotate(-90)" text-anchor="middle" font-size="11">${esc(p.yLabel)}${p.logY ? ' (log)' : ''}</text>`)
  for (const s of p.series) {
    const color = COLORS[names.indexOf(s.name) % COLORS.length] as string
    const valid = s.points.filter((q) => Number.isFinite(q.y) && (!p.logY || q.y > 0)).sort((a, b) => a.x - b.x)
    if (valid.length === 0) continue
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.8" points="${valid.map((q) => `${sx(q.x).toFixed(1)},${sy(q.y).toFixed(1)}`).join(' ')}"/>`)
    for (const q of valid) out.push(`<circle cx="${sx(q.x).toFixed(1)}" cy="${sy(q.y).toFixed(1)}" r="2.5" fill="${color}"/>`)
  }
  return out.join('\n')
}

/** Renders panels side by side with a shared legend. */
export function renderSvg(title: string, panels: readonly Panel[]): string {
  const names = [...new Set(panels.flatMap((p) => p.series.map((s) => s.name)))]
  const width = Math.max(1, panels.length) * W
  const legendY = H + 10
  const legend = names
    .map((n, i) => `<rect x="${10 + i * 150}" y="${legendY}" width="12" height="12" fill="${COLORS[i % COLORS.length]}"/><text x="${26 + i * 150}" y="${legendY + 10}" font-size="11">${esc(n)}</text>`)
    .join('\n')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H + 40}" font-family="sans-serif" font-size="12">
<title>${esc(title)}</title>
<rect width="100%" height="100%" fill="white"/>
${panels.map((p, i) => panel(p, i * W, names)).join('\n')}
${legend}
</svg>
`
}
