// API keys: create (the secret shown once, from memory only, with a copy button and client snippets), list, revoke.
import { useEffect, useState } from 'preact/hooks'
import { api, spendText, when } from './api.ts'
import { Status, useAction, useApp, TableScroll } from './shared.tsx'
import { gatewayRoot, snippets } from './snippets.ts'

interface Key { key_id: string, name: string, prefix: string, created_at: string, expires_at: string | null, last_used_at: string | null, models: string[] | null, usd_per_month: number | null, spent_micros_this_month?: number }
interface Created extends Key { key: string }

function NewKey ({ created, model, onClose }: { created: Created, model: string, onClose: () => void }) {
  const { me } = useApp()
  const list = snippets(gatewayRoot(me.console_path), created.key, model)
  const [tab, setTab] = useState(list[0].id)
  const [copied, setCopied] = useState('')
  const copy = async (text: string, what: string): Promise<void> => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied(`${what} copied.`)
    } catch {
      setCopied('Copying was refused by the browser: select the text and copy it.')
    }
  }
  const shown = list.find(s => s.id === tab) ?? list[0]
  return (
    <section class="panel" aria-labelledby="new-key-title">
      <h2 id="new-key-title" tabIndex={-1}>Your new key “{created.name}”</h2>
      <p><strong>Copy it now: it is shown only this once.</strong> Gatehouse keeps only its digest.</p>
      <label for="new-key-value">Key</label>
      <div class="row">
        <input id="new-key-value" class="mono" readOnly value={created.key} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={() => { void copy(created.key, 'Key') }}>Copy key</button>
      </div>
      <h3>Use it from</h3>
      <div role="tablist" aria-label="Client" class="tabs">
        {list.map(s => (
          <button key={s.id} type="button" role="tab" id={`tab-${s.id}`} aria-selected={s.id === tab} aria-controls="snippet-panel" tabIndex={s.id === tab ? 0 : -1}
            onClick={() => setTab(s.id)}
            onKeyDown={(e) => {
              const i = list.findIndex(x => x.id === tab)
              const next = e.key === 'ArrowRight' ? (i + 1) % list.length : e.key === 'ArrowLeft' ? (i - 1 + list.length) % list.length : -1
              if (next >= 0) { setTab(list[next].id); (e.currentTarget.parentElement?.children[next] as HTMLElement | undefined)?.focus() }
            }}>{s.label}</button>
        ))}
      </div>
      <div role="tabpanel" id="snippet-panel" aria-labelledby={`tab-${shown.id}`}>
        <pre tabIndex={0} aria-label={`${shown.label} example`}><code>{shown.text}</code></pre>
        <button type="button" class="secondary" onClick={() => { void copy(shown.text, `${shown.label} example`) }}>Copy {shown.label} example</button>
      </div>
      <p role="status" aria-live="polite">{copied}</p>
      <button type="button" onClick={onClose}>I have saved it</button>
    </section>
  )
}

export function KeysPage () {
  const { me, sensitive, confirm } = useApp()
  const [keys, setKeys] = useState<Key[] | undefined>(undefined)
  const [name, setName] = useState('')
  const [days, setDays] = useState('90')
  const [models, setModels] = useState('')
  const [budget, setBudget] = useState('')
  const [created, setCreated] = useState<Created | undefined>(undefined)
  const create = useAction()
  const list = useAction()
  const load = async (): Promise<void> => { setKeys(await api('GET', 'keys')) }
  useEffect(() => { void list.run(async () => { await load(); return '' }) }, [])
  useEffect(() => { if (created !== undefined) document.getElementById('new-key-title')?.focus() }, [created])
  const firstModel = models.split(',').map(m => m.trim()).find(m => m !== '' && !m.includes('*')) ?? me.models[0] ?? 'gemini-2.5-flash'
  return (
    <>
      <h1 tabIndex={-1}>API keys</h1>
      <p>A key lets a program call the model proxy as you, within your limits. Keys you revoke stop within seconds.</p>
      {created !== undefined && <NewKey created={created} model={firstModel} onClose={() => setCreated(undefined)} />}
      {me.can_create_keys
        ? (
          <form class="panel" onSubmit={(e) => {
            e.preventDefault()
            void create.run(async () => {
              const body: Record<string, unknown> = { name }
              if (days !== '') body.expires_in_days = Number(days)
              const patterns = models.split(',').map(m => m.trim()).filter(m => m !== '')
              if (patterns.length > 0) body.models = patterns
              if (budget.trim() !== '') body.usd_per_month = budget.trim()
              const key = await sensitive(pw => api<Created>('POST', 'keys', { ...body, current_password: pw }))
              setCreated(key)
              setName('')
              setBudget('')
              await load()
              return 'Key created.'
            })
          }}>
            <h2>Create a key</h2>
            <label for="key-name">Name</label>
            <input id="key-name" required maxLength={64} value={name} onInput={(e) => setName(e.currentTarget.value)} aria-describedby="key-name-help" />
            <p id="key-name-help" class="help">Where it will be used, such as “laptop” or “CI”.</p>
            <label for="key-expiry">Expires after</label>
            <select id="key-expiry" value={days} onChange={(e) => setDays(e.currentTarget.value)}>
              <option value="7">7 days</option>
              <option value="30">30 days</option>
              <option value="90">90 days</option>
              <option value="365">a year</option>
              <option value="">never</option>
            </select>
            <label for="key-models">Models (optional)</label>
            <input id="key-models" list="model-ids" value={models} onInput={(e) => setModels(e.currentTarget.value)} aria-describedby="key-models-help" />
            <datalist id="model-ids">{me.models.map(m => <option key={m} value={m} />)}</datalist>
            <p id="key-models-help" class="help">Comma-separated names or patterns such as gemini-2.5-flash*; empty: every model your level may use.</p>
            <label for="key-budget">Monthly budget in US dollars (optional)</label>
            <input id="key-budget" inputMode="decimal" pattern="[0-9]+(\.[0-9]{1,6})?" value={budget} onInput={(e) => setBudget(e.currentTarget.value)} aria-describedby="key-budget-help" />
            <p id="key-budget-help" class="help">What this key may spend per UTC month, such as 20 or 2.50; empty: only your own budgets hold.</p>
            <button type="submit" disabled={create.busy}>Create key</button>
            <Status error={create.error} done={create.done} />
          </form>
          )
        : <p>Creating keys needs level {me.key_min_level} or above.</p>}
      <h2>Your keys</h2>
      <Status error={list.error} done={list.done} />
      {keys !== undefined && (keys.length === 0
        ? <p>You have no keys.</p>
        : (
          <TableScroll label="Your API keys"><table>
            <caption>Your API keys</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Models</th><th scope="col">Spent this UTC month</th><th scope="col">Action</th></tr></thead>
            <tbody>
              {keys.map(k => (
                <tr key={k.key_id}>
                  <td>{k.name}</td>
                  <td class="mono">{k.prefix}…</td>
                  <td>{when(k.created_at)}</td>
                  <td>{k.expires_at === null ? 'never' : when(k.expires_at)}</td>
                  <td>{when(k.last_used_at)}</td>
                  <td>{k.models === null ? 'all allowed' : k.models.join(', ')}</td>
                  <td data-spent={k.key_id}>{spendText(k.spent_micros_this_month ?? 0, k.usd_per_month)}</td>
                  <td><button type="button" class="danger" aria-label={`Revoke key ${k.name}`} onClick={() => { void list.run(async () => { await confirm(`Revoke the key ${k.name}? Programs using it are refused within seconds; this cannot be undone.`, `Revoke ${k.name}`); await api('DELETE', `keys/${k.key_id}`); await load(); return `Key ${k.name} revoked.` }) }}>Revoke</button></td>
                </tr>
              ))}
            </tbody>
          </table></TableScroll>
          ))}
    </>
  )
}
