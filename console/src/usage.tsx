// Usage per UTC day over a chosen range, aggregated by the server: a chart by model, key or user, the tables, CSV.
import { useEffect, useMemo, useState } from 'preact/hooks'
import { api, apiUrl, daysAgo, fmt, today, usd } from './api.ts'
import { Status, useAction, TableScroll } from './shared.tsx'
import { UsageChart } from './chart.tsx'

const METRICS = { requests: 'Requests', input_tokens: 'Input tokens', output_tokens: 'Output tokens', thinking_tokens: 'Thinking tokens', errors_4xx: 'Errors 4xx', errors_5xx: 'Errors 5xx', cost_micros: 'Spend (USD)', grounded_requests: 'Grounded requests' } as const
type Metric = keyof typeof METRICS
/** A count as the page shows it: spend (micro-dollars on the wire) in dollars. */
const shown = (metric: string, n: number): string => metric === 'cost_micros' ? usd.format(n / 1_000_000) : fmt.format(n)
type Counts = Record<Metric, number>
interface Group { id: string | null, label: string, owner?: string, totals: Counts, series: Record<Metric, number[]> }
/** A UTC day as the pickers and tables write it. */
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/
interface View { from: string, to: string, days: string[], totals: Counts, daily: Array<{ day: string } & Counts>, by: Record<string, Group[]>, top_users?: Array<{ id: string, label: string } & Counts>, top_spenders?: Array<{ id: string, label: string } & Counts> }

export function UsagePage ({ scope }: { scope: 'own' | 'admin' }) {
  const [from, setFrom] = useState(daysAgo(29))
  const [to, setTo] = useState(today())
  const [metric, setMetric] = useState<Metric>('requests')
  const dimensions = scope === 'admin' ? ['user', 'model', 'key'] : ['model', 'key']
  const [by, setBy] = useState(dimensions[0])
  const [view, setView] = useState<View | undefined>(undefined)
  const { busy, error, done, run } = useAction()
  const base = scope === 'admin' ? 'admin/usage' : 'usage'
  const query = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`
  // A range the server refuses shows its reason alone: the previous range's numbers are no answer to it.
  const load = (): Promise<void> => run(async () => {
    try {
      for (const [name, value] of [['From', from], ['To', to]]) if (!ISO_DAY.test(value)) throw new Error(`${name} must be a day written yyyy-mm-dd, such as ${today()}.`)
      setView(await api<View>('GET', `${base}?${query}`))
    } catch (err) {
      setView(undefined)
      throw err
    }
    return ''
  })
  useEffect(() => { void load() }, [])
  // The chart's axis counts dollars for spend, as the tables do.
  const groups = useMemo(() => (view?.by[by] ?? []).map(g => ({ label: g.label, values: metric === 'cost_micros' ? g.series[metric].map(n => n / 1_000_000) : g.series[metric] })), [view, by, metric])
  const active = view?.daily.filter(d => d.requests > 0) ?? []
  // The admin sees whose each key is.
  const owners = scope === 'admin' && by === 'key'
  return (
    <>
      <h1 tabIndex={-1}>{scope === 'admin' ? 'Usage of everyone' : 'Your usage'}</h1>
      <p>Days are UTC days, written yyyy-mm-dd; counts are summed per day on the server. Errors count the requests answered 4xx (refused calls among them) or 5xx; grounded requests, the calls whose answer ran Google Search.</p>
      <form class="filters" noValidate onSubmit={(e) => { e.preventDefault(); void load() }}>
        <div><label for="u-from">From (UTC, yyyy-mm-dd)</label><input id="u-from" class="day" inputMode="numeric" autocomplete="off" maxLength={10} required value={from} onInput={(e) => setFrom(e.currentTarget.value.trim())} /></div>
        <div><label for="u-to">To (UTC, yyyy-mm-dd)</label><input id="u-to" class="day" inputMode="numeric" autocomplete="off" maxLength={10} required value={to} onInput={(e) => setTo(e.currentTarget.value.trim())} /></div>
        <div><label for="u-metric">Show</label>
          <select id="u-metric" value={metric} onChange={(e) => setMetric(e.currentTarget.value as Metric)}>
            {Object.entries(METRICS).map(([k, v]) => <option key={k} value={k}>{v}</option>)}
          </select></div>
        <div><label for="u-by">By</label>
          <select id="u-by" value={by} onChange={(e) => setBy(e.currentTarget.value)}>
            {dimensions.map(d => <option key={d} value={d}>{d}</option>)}
          </select></div>
        <button type="submit" disabled={busy}>Show</button>
        <a class="button secondary" href={apiUrl(`${base}.csv?${query}`)} download>Export CSV</a>
      </form>
      <Status error={error} done={done === '' ? undefined : done} />
      {view !== undefined && (
        <>
          <dl class="facts totals">
            {Object.entries(METRICS).map(([k, v]) => <><dt key={`t-${k}`}>{v}</dt><dd key={`v-${k}`} data-metric={k}>{shown(k, view.totals[k as Metric])}</dd></>)}
          </dl>
          <UsageChart days={view.days} groups={groups} title={`${METRICS[metric]} per day by ${by}`} />
          <h2>By {by}</h2>
          <TableScroll label="Totals"><table>
            <caption>Totals by {by}, {view.from} to {view.to}</caption>
            <thead><tr><th scope="col">{by}</th>{owners && <th scope="col">Owner</th>}{Object.values(METRICS).map(v => <th scope="col" key={v}>{v}</th>)}</tr></thead>
            <tbody>
              {(view.by[by] ?? []).map(g => <tr key={g.label}><th scope="row">{g.label}</th>{owners && <td>{g.owner ?? '—'}</td>}{Object.keys(METRICS).map(k => <td key={k}>{shown(k, g.totals[k as Metric])}</td>)}</tr>)}
            </tbody>
          </table></TableScroll>
          {view.top_users !== undefined && (
            <>
              <h2>Top users</h2>
              <TableScroll label="Users with the most tokens"><table>
                <caption>Users with the most tokens, {view.from} to {view.to}</caption>
                <thead><tr><th scope="col">User</th>{Object.values(METRICS).map(v => <th scope="col" key={v}>{v}</th>)}</tr></thead>
                <tbody>{view.top_users.map(u => <tr key={u.id}><th scope="row">{u.label}</th>{Object.keys(METRICS).map(k => <td key={k}>{shown(k, u[k as Metric])}</td>)}</tr>)}</tbody>
              </table></TableScroll>
            </>
          )}
          {view.top_spenders !== undefined && (
            <>
              <h2>Top spenders</h2>
              {view.top_spenders.length === 0
                ? <p>No one spent anything with a known price in this range.</p>
                : (
                  <TableScroll label="Users who spent the most"><table>
                    <caption>Users who spent the most, {view.from} to {view.to}</caption>
                    <thead><tr><th scope="col">User</th><th scope="col">Spend (USD)</th><th scope="col">Requests</th></tr></thead>
                    <tbody>{view.top_spenders.map(u => <tr key={u.id}><th scope="row">{u.label}</th><td data-spend={u.id}>{shown('cost_micros', u.cost_micros)}</td><td>{fmt.format(u.requests)}</td></tr>)}</tbody>
                  </table></TableScroll>
                  )}
            </>
          )}
          <h2>By day</h2>
          {active.length === 0
            ? <p>No calls in this range.</p>
            : (
              <TableScroll label="Days with calls"><table>
                <caption>Days with calls, {view.from} to {view.to} (UTC)</caption>
                <thead><tr><th scope="col">Day</th>{Object.values(METRICS).map(v => <th scope="col" key={v}>{v}</th>)}</tr></thead>
                <tbody>{active.map(d => <tr key={d.day}><th scope="row">{d.day}</th>{Object.keys(METRICS).map(k => <td key={k}>{shown(k, d[k as Metric])}</td>)}</tr>)}</tbody>
              </table></TableScroll>
              )}
        </>
      )}
    </>
  )
}
