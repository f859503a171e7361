// A per-day chart of one metric, one line per group (uPlot on a canvas), with a legend in text; the numbers are
// also in the table beside it, so the canvas is an image with a summary for assistive technology.
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
    const plot = new uPlot({
      width: Math.max(280, el.clientWidth),
      height: 260,
      legend: { show: false },
      cursor: { show: true, drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [
        { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid } },
        { stroke: ink, grid: { stroke: grid }, ticks: { stroke: grid }, size: 60, values: (_u, v) => v.map(n => fmt.format(n)) },
      ],
      series: [{}, ...groups.map((g, i) => ({ label: g.label, stroke: PALETTE[i % PALETTE.length], width: 2, points: { show: days.length < 60 } }))],
      tzDate: ts => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    }, [xs, ...groups.map(g => g.values)], el)
    const resize = (): void => plot.setSize({ width: Math.max(280, el.clientWidth), height: 260 })
    window.addEventListener('resize', resize)
    return () => { window.removeEventListener('resize', resize); plot.destroy() }
  }, [days, groups])
  const total = groups.reduce((sum, g) => sum + g.values.reduce((a, b) => a + b, 0), 0)
  return (
    <figure class="chart">
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
