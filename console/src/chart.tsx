// A per-day chart of one metric, a bar per day stacked by group (uPlot on a canvas: counts per day are bars, not a
// trend line), with a legend in text; the numbers are also in the table beside it, so the canvas is an image with a
// summary for assistive technology.
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import { fmt } from './api.ts'

export interface ChartGroup { label: string, values: number[] }

const PALETTE = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7b83', '#6e7781', '#57606a']

export function UsageChart ({ days, groups, title }: { days: string[], groups: ChartGroup[], title: string }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const el = box.current
    if (el === null || days.length === 0) return
    const style = getComputedStyle(document.documentElement)
    const ink = style.getPropertyValue('--ink').trim() || '#222'
    const grid = style.getPropertyValue('--line').trim() || '#ccc'
    const xs = days.map(d => Date.parse(d + 'T00:00:00Z') / 1000)
    // Stacked: series k holds groups 0..k summed, drawn tallest first, so each group shows as its own slice.
    const stacked: number[][] = []
    groups.forEach((g, i) => stacked.push(g.values.map((v, d) => v + (i === 0 ? 0 : stacked[i - 1][d]))))
    const order = groups.map((_, i) => groups.length - 1 - i)
    const bars = uPlot.paths.bars!({ size: [0.7, 48], align: 0 })
    const half = 43_200
    const plot = new uPlot({
      width: Math.max(280, el.clientWidth),
      height: 260,
      legend: { show: false },
      cursor: { show: true, drag: { x: false, y: false } },
      // Half a day each side, so the first and last bars are whole, a lone day's included.
      scales: { x: { time: true, range: () => [xs[0] - half, xs[xs.length - 1] + half] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [
        // Days as the tables write them (yyyy-mm-dd, UTC), spaced so the labels never overlap.
        { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid }, space: 96, incrs: [86_400, 2 * 86_400, 7 * 86_400, 14 * 86_400, 28 * 86_400, 56 * 86_400, 112 * 86_400], values: (_u, ticks) => ticks.map(t => new Date(t * 1000).toISOString().slice(0, 10)) },
        { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid }, size: 60, values: (_u, v) => v.map(n => fmt.format(n)) },
      ],
      series: [{}, ...order.map(i => ({ label: groups[i].label, stroke: PALETTE[i % PALETTE.length], fill: PALETTE[i % PALETTE.length], width: 0, paths: bars, points: { show: false } }))],
      tzDate: ts => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    }, [xs, ...order.map(i => stacked[i])], el)
    const resize = (): void => plot.setSize({ width: Math.max(280, el.clientWidth), height: 260 })
    window.addEventListener('resize', resize)
    return () => { window.removeEventListener('resize', resize); plot.destroy() }
  }, [days, groups])
  const total = groups.reduce((sum, g) => sum + g.values.reduce((a, b) => a + b, 0), 0)
  return (
    <figure class="chart" data-draw="bars">
      <div ref={box} role="img" aria-label={`${title}: ${fmt.format(total)} in all from ${days[0] ?? ''} to ${days[days.length - 1] ?? ''} (UTC), by ${groups.map(g => g.label).join(', ') || 'nothing'}; the numbers are in the table below.`} />
      <figcaption>
        <span class="visually-hidden">{title}. </span>
        <ul class="legend">
          {groups.map((g, i) => <li key={g.label}><span class="swatch" data-color={i % PALETTE.length} aria-hidden="true" />{g.label}</li>)}
        </ul>
      </figcaption>
    </figure>
  )
}
