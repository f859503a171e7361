// The admin's pages: users (add by link or password, search, paging, level, disable, lockout, sessions, password reset,
// keys, limits) and the upstream's state.
import { useEffect, useState } from 'preact/hooks'
import { api, fmt, spendText, usd, when } from './api.ts'
import { Status, useAction, useApp, TableScroll } from './shared.tsx'

interface User { user_id: string, username: string, email: string | null, access_level: string, date_joined: string, disabled: boolean, last_login?: string | null }
interface UserKey { key_id: string, name: string, prefix?: string, created_at?: string, expires_at?: string | null, usd_per_month?: number | null, spent_micros_this_month?: number }
interface Detail { user: User, sessions: number, keys: number, limits: { limits: Record<string, number | null> | null, effective: Record<string, number | null> }, level_limits: Record<string, Record<string, number | null>> }

const LEVELS = ['default', 'member', 'admin', 'dev', 'hush']
const LIMITS: Record<string, string> = { rpm: 'Requests per minute', tpm: 'Tokens per minute', tokens_per_day: 'Tokens per UTC day', concurrent: 'Calls at once', usd_per_day: 'Spend per UTC day (USD)', usd_per_month: 'Spend per UTC month (USD)' }
/** A limit's amount as shown: the dollar budgets as money. */
const amount = (name: string, n: number): string => name.startsWith('usd_') ? usd.format(n) : fmt.format(n)
const PAGE = 25

const limitText = (v: number | null | undefined): string => v == null ? 'unlimited' : fmt.format(v)

/** What changes in a user's limits if their level goes from `from` to `to`, in words; empty when nothing does. */
function limitChanges (detail: Detail, from: string, to: string): string {
  const now = detail.level_limits[from] ?? {}
  const then = detail.level_limits[to] ?? {}
  return Object.entries(LIMITS).filter(([k]) => now[k] !== then[k])
    .map(([k, v]) => `${v.charAt(0).toLowerCase() + v.slice(1)} ${limitText(now[k])} → ${limitText(then[k])}`).join('; ')
}

function UserPanel ({ id, onChanged, onClose }: { id: string, onChanged: () => Promise<void>, onClose: () => void }) {
  const { sensitive, confirm } = useApp()
  const [detail, setDetail] = useState<Detail | undefined>(undefined)
  const [level, setLevel] = useState('')
  const [limits, setLimits] = useState<Record<string, string>>({})
  const [newPassword, setNewPassword] = useState('')
  const [userKeys, setUserKeys] = useState<UserKey[]>([])
  const [link, setLink] = useState<Link | undefined>(undefined)
  const act = useAction()
  const load = async (): Promise<void> => {
    const d = await api<Detail>('GET', `admin/users/${id}`)
    setUserKeys(await api<UserKey[]>('GET', `admin/users/${id}/keys`))
    setDetail(d)
    setLevel(d.user.access_level)
    setLimits(Object.fromEntries(Object.keys(LIMITS).map(k => [k, d.limits.limits?.[k] == null ? '' : String(d.limits.limits[k])])))
  }
  useEffect(() => { void act.run(async () => { await load(); return '' }).then(() => document.getElementById('user-panel-title')?.focus()) }, [id])
  // The message is announced once the list shows the change too, so what it says and what is listed agree.
  const change = (task: () => Promise<unknown>, message: string) => act.run(async () => { await task(); await load(); await onChanged(); return message })
  if (detail === undefined) return <Status error={act.error} />
  const u = detail.user
  return (
    <section class="panel" aria-labelledby="user-panel-title">
      <h2 id="user-panel-title" tabIndex={-1}>Manage {u.username}</h2>
      <dl class="facts">
        <dt>Level</dt><dd>{u.access_level}</dd>
        <dt>Status</dt><dd>{u.disabled ? 'disabled' : 'enabled'}</dd>
        <dt>Joined</dt><dd>{when(u.date_joined)}</dd>
        <dt>Live sessions</dt><dd>{detail.sessions}</dd>
        <dt>API keys</dt><dd>{detail.keys}</dd>
      </dl>
      <form class="row" onSubmit={(e) => { e.preventDefault(); void change(() => sensitive(pw => api('PUT', `admin/users/${id}/level`, { access_level: level, current_password: pw })), `Level set to ${level}.`) }}>
        <label for="user-level">Access level</label>
        <select id="user-level" value={level} aria-describedby="level-limits" onChange={(e) => setLevel(e.currentTarget.value)}>{LEVELS.map(l => <option key={l} value={l}>{l}</option>)}</select>
        <button type="submit" disabled={act.busy}>Set level</button>
      </form>
      <p id="level-limits" class="hint" aria-live="polite">{level === u.access_level ? '' : (changes => changes === '' ? `At ${level} their limits stay as they are.` : `At ${level} their limits change: ${changes}.`)(limitChanges(detail, u.access_level, level))}</p>
      <div class="row">
        <button type="button" class={u.disabled ? '' : 'danger'} disabled={act.busy} onClick={() => { void change(async () => { if (!u.disabled) await confirm(`Disable ${u.username}? Their sessions end and their keys are refused until you enable them again.`, `Disable ${u.username}`); await sensitive(pw => api('PUT', `admin/users/${id}/status`, { disabled: !u.disabled, current_password: pw })) }, u.disabled ? `${u.username} enabled.` : `${u.username} disabled; their sessions ended.`) }}>{u.disabled ? 'Enable' : 'Disable'} {u.username}</button>
        <button type="button" class="secondary" disabled={act.busy} onClick={() => { void change(() => sensitive(pw => api('DELETE', `admin/users/${id}/lockout`, { current_password: pw })), 'Lockout cleared.') }}>Clear login lockout</button>
        <button type="button" class="secondary" disabled={act.busy} onClick={() => { void change(async () => { await confirm(`End every session of ${u.username}? They are signed out everywhere at once.`, 'End all sessions'); await sensitive(pw => api('DELETE', `admin/users/${id}/sessions`, { current_password: pw })) }, 'Sessions ended.') }}>End all sessions</button>
      </div>
      <form class="row" onSubmit={(e) => { e.preventDefault(); void change(() => sensitive(pw => api('PUT', `admin/users/${id}/password`, { password: newPassword, current_password: pw })), `New password set for ${u.username}; their sessions ended.`).then(() => setNewPassword('')) }}>
        <label for="user-new-password">New password</label>
        <input id="user-new-password" type="password" autocomplete="new-password" required value={newPassword} onInput={(e) => setNewPassword(e.currentTarget.value)} />
        <button type="submit" disabled={act.busy}>Reset password</button>
      </form>
      <div class="row">
        <button type="button" class="secondary" disabled={act.busy} onClick={() => {
          void change(async () => {
            await confirm(`Make a sign-in link for ${u.username}? Their password stops working and their sessions end; with the link they choose a new one.`, 'Make the link')
            setLink(await sensitive(pw => api<Link>('POST', `admin/users/${id}/sign-in-link`, { current_password: pw })))
          }, `Sign-in link made for ${u.username}; their password and sessions ended.`)
        }}>Reset by sign-in link</button>
      </div>
      {link !== undefined && <LinkShown username={u.username} link={link} />}
      <h3>API keys of {u.username}</h3>
      {userKeys.length === 0
        ? <p>{u.username} has no keys.</p>
        : (
          <ul>
            {userKeys.map(k => (
              <li key={k.key_id}>{k.name} <span class="help">(expires {k.expires_at == null ? 'never' : when(k.expires_at)}; spent <span data-spent={k.key_id}>{spendText(k.spent_micros_this_month ?? 0, k.usd_per_month ?? null)}</span> this UTC month)</span>{' '}
                <button type="button" class="danger" disabled={act.busy} aria-label={`Revoke key ${k.name} of ${u.username}`} onClick={() => { void change(async () => { await confirm(`Revoke the key ${k.name} of ${u.username}? Calls with it stop at once.`, `Revoke ${k.name}`); await sensitive(pw => api('DELETE', `admin/users/${id}/keys/${k.key_id}`, { current_password: pw })) }, `Key ${k.name} revoked.`) }}>Revoke</button>
              </li>
            ))}
          </ul>
          )}
      <form onSubmit={(e) => {
        e.preventDefault()
        const body: Record<string, number> = {}
        for (const [k, v] of Object.entries(limits)) if (v.trim() !== '') body[k] = Number(v)
        void change(() => sensitive(pw => api('PUT', `admin/users/${id}/limits`, { ...body, current_password: pw })), Object.keys(body).length === 0 ? 'Back on the level\'s limits.' : 'Limits saved.')
      }}>
        <h3>Limits for {u.username}</h3>
        <p class="help">Empty: the level's limit. In effect now: {Object.entries(LIMITS).map(([k, v]) => `${v.charAt(0).toLowerCase() + v.slice(1)} ${detail.limits.effective[k] == null ? 'unlimited' : amount(k, detail.limits.effective[k]!)}`).join('; ')}.</p>
        <div class="filters">
          {Object.entries(LIMITS).map(([k, v]) => (
            <div key={k}><label for={`limit-${k}`}>{v}</label><input id={`limit-${k}`} type="number" min={0} step={k.startsWith('usd_') ? 'any' : 1} inputMode={k.startsWith('usd_') ? 'decimal' : 'numeric'} value={limits[k] ?? ''} onInput={(e) => setLimits({ ...limits, [k]: e.currentTarget.value })} /></div>
          ))}
        </div>
        <button type="submit" disabled={act.busy}>Save limits</button>
      </form>
      <Status error={act.error} done={act.done === '' ? undefined : act.done} />
      <button type="button" class="secondary" onClick={onClose}>Close</button>
    </section>
  )
}

interface Link { token: string, expires_at: string }

/** The console address that redeems a sign-in link: this page's own, with the token in the fragment (never sent). */
const linkUrl = (token: string): string => `${location.origin}${location.pathname}#/welcome/${token}`

/** A sign-in link just made, to pass on to its user: shown once, with a copy button. */
function LinkShown ({ username, link }: { username: string, link: Link }) {
  const [copied, setCopied] = useState('')
  const url = linkUrl(link.token)
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(url)
      setCopied('Link copied.')
    } catch {
      setCopied('Copying was refused by the browser: select the link and copy it.')
    }
  }
  return (
    <div class="panel">
      <label for="sign-in-link">Sign-in link for {username}</label>
      <div class="row">
        <input id="sign-in-link" class="mono link" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" onClick={() => { void copy() }}>Copy link</button>
      </div>
      <p class="help">Send it to {username} privately. It works once, until {when(link.expires_at)}; they choose their own password with it.</p>
      <p class="status ok" role="status">{copied}</p>
    </div>
  )
}

function AddUser ({ onAdded }: { onAdded: (id: string) => Promise<void> }) {
  const { sensitive } = useApp()
  const [username, setUsername] = useState('')
  const [byLink, setByLink] = useState(true)
  const [password, setPassword] = useState('')
  const [made, setMade] = useState<{ username: string, link: Link } | undefined>(undefined)
  const act = useAction()
  return (
    <form class="panel" aria-labelledby="add-user-title" onSubmit={(e) => {
      e.preventDefault()
      void act.run(async () => {
        const body = byLink ? { username } : { username, password }
        const added = await sensitive(pw => api<{ user: User, sign_in_link?: Link }>('POST', 'admin/users', { ...body, current_password: pw }))
        setUsername('')
        setPassword('')
        setMade(added.sign_in_link === undefined ? undefined : { username: added.user.username, link: added.sign_in_link })
        await onAdded(added.user.user_id)
        return added.sign_in_link === undefined ? `${added.user.username} added: pass the password on to them.` : `${added.user.username} added: send them the sign-in link below.`
      })
    }}>
      <h2 id="add-user-title">Add a user</h2>
      <div class="filters">
        <div><label for="add-user-name">New username</label><input id="add-user-name" autocomplete="off" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} /></div>
        <fieldset class="choice">
          <legend>How they sign in first</legend>
          <label><input type="radio" name="add-user-how" checked={byLink} onChange={() => setByLink(true)} /> Send a sign-in link: they choose a password</label>
          <label><input type="radio" name="add-user-how" checked={!byLink} onChange={() => setByLink(false)} /> Set a password for them</label>
        </fieldset>
        {!byLink && <div><label for="add-user-password">Their password</label><input id="add-user-password" type="password" autocomplete="new-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} /></div>}
      </div>
      <button type="submit" disabled={act.busy}>Add user</button>
      <Status error={act.error} done={act.done === '' ? undefined : act.done} />
      {made !== undefined && <LinkShown username={made.username} link={made.link} />}
    </form>
  )
}

interface SettingState { value: boolean, configured: boolean, set_by: string | null, set_at: string | null }
type SettingsView = Record<'public_signup' | 'public_lookup', SettingState>
const SETTINGS: Record<keyof SettingsView, string> = { public_signup: 'Anyone may sign up', public_lookup: 'Anyone may look users up by name (search-users, get-user-id)' }

/** Public sign-up and public lookup: open or closed for everyone, over the configured defaults. */
function SignupSettings () {
  const { sensitive } = useApp()
  const [view, setView] = useState<SettingsView | undefined>(undefined)
  const [wanted, setWanted] = useState<Record<string, boolean>>({})
  const act = useAction()
  const show = (v: SettingsView): void => { setView(v); setWanted({ public_signup: v.public_signup.value, public_lookup: v.public_lookup.value }) }
  useEffect(() => { void act.run(async () => { show(await api<SettingsView>('GET', 'admin/settings')); return '' }) }, [])
  if (view === undefined) return <Status error={act.error} />
  return (
    <form class="panel" aria-labelledby="settings-title" onSubmit={(e) => {
      e.preventDefault()
      void act.run(async () => {
        show(await sensitive(pw => api<SettingsView>('PUT', 'admin/settings', { ...wanted, current_password: pw })))
        return `Saved: sign-up ${wanted.public_signup === true ? 'open' : 'closed'}, lookup ${wanted.public_lookup === true ? 'open to anyone' : 'for signed-in users only'}.`
      })
    }}>
      <h2 id="settings-title">Sign-up and lookup</h2>
      {(Object.keys(SETTINGS) as Array<keyof SettingsView>).map(k => (
        <div key={k}>
          <label class="check"><input type="checkbox" checked={wanted[k]} aria-describedby={`setting-${k}`} onChange={(e) => setWanted({ ...wanted, [k]: e.currentTarget.checked })} /> {SETTINGS[k]}</label>
          <p id={`setting-${k}`} class="hint">{view[k].set_at === null ? `As configured (${view[k].configured ? 'on' : 'off'}).` : `Changed by an admin at ${when(view[k].set_at)}; configured ${view[k].configured ? 'on' : 'off'}.`}</p>
        </div>
      ))}
      <button type="submit" disabled={act.busy}>Save sign-up and lookup</button>
      <Status error={act.error} done={act.done === '' ? undefined : act.done} />
    </form>
  )
}

export function UsersPage () {
  const [q, setQ] = useState('')
  const [offset, setOffset] = useState(0)
  const [page, setPage] = useState<{ users: User[], more: boolean } | undefined>(undefined)
  const [open, setOpen] = useState<string | undefined>(undefined)
  const list = useAction()
  const load = (search = q, at = offset): Promise<void> => list.run(async () => {
    setPage(await api('GET', `admin/users?q=${encodeURIComponent(search)}&offset=${at}&limit=${PAGE}`))
    return ''
  })
  useEffect(() => { void load() }, [])
  return (
    <>
      <h1 tabIndex={-1}>Users</h1>
      <form class="filters" role="search" onSubmit={(e) => { e.preventDefault(); setOffset(0); void load(q, 0) }}>
        <div><label for="user-search">Username contains</label><input id="user-search" type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} /></div>
        <button type="submit">Search</button>
      </form>
      <Status error={list.error} />
      <AddUser onAdded={async (id) => { await load(); setOpen(id) }} />
      <SignupSettings />
      {open !== undefined && <UserPanel id={open} onChanged={load} onClose={() => setOpen(undefined)} />}
      {page !== undefined && (
        <>
          <TableScroll label="Users"><table>
            <caption>Users {offset + 1} to {offset + page.users.length}</caption>
            <thead><tr><th scope="col">Username</th><th scope="col">Level</th><th scope="col">Status</th><th scope="col">Joined</th><th scope="col">Last sign-in</th><th scope="col">Action</th></tr></thead>
            <tbody>
              {page.users.map(u => (
                <tr key={u.user_id}>
                  <th scope="row">{u.username}</th>
                  <td>{u.access_level}</td>
                  <td>{u.disabled ? 'disabled' : 'enabled'}</td>
                  <td>{when(u.date_joined)}</td>
                  <td>{when(u.last_login)}</td>
                  <td><button type="button" class="secondary" aria-label={`Manage ${u.username}`} onClick={() => setOpen(u.user_id)}>Manage</button></td>
                </tr>
              ))}
            </tbody>
          </table></TableScroll>
          <nav aria-label="Pages of users" class="row">
            <button type="button" class="secondary" disabled={offset === 0} onClick={() => { const at = Math.max(0, offset - PAGE); setOffset(at); void load(q, at) }}>Previous page</button>
            <button type="button" class="secondary" disabled={!page.more} onClick={() => { const at = offset + PAGE; setOffset(at); void load(q, at) }}>Next page</button>
          </nav>
        </>
      )}
    </>
  )
}

interface Standing { id: string, stage: 'ga' | 'preview' | 'shutdown', shutdown_on: string | null, replacement: string | null }
interface Upstream { configured: boolean, backend: string | null, ready?: boolean, reason?: string | null, credentials: Array<{ name: string, state: string, reason: string | null, until: string | null }>, models: string[], families: Array<{ family: string, models: Standing[] }>, unpriced?: string[] }

const STAGES: Record<Standing['stage'], string> = { ga: 'GA', preview: 'preview', shutdown: 'shut down' }

/** A model's stage in words: GA or preview, the day it is due to go, or shut down and what serves it. */
function stageOf (m: Standing): string {
  if (m.stage === 'shutdown') return `shut down since ${m.shutdown_on ?? '?'}; served by ${m.replacement ?? '?'}`
  return m.shutdown_on === null ? STAGES[m.stage] : `${STAGES[m.stage]}; shuts down on ${m.shutdown_on} (then ${m.replacement ?? '?'})`
}

export function UpstreamPage () {
  const [view, setView] = useState<Upstream | undefined>(undefined)
  const act = useAction()
  useEffect(() => { void act.run(async () => { setView(await api('GET', 'admin/upstream')); return '' }) }, [])
  return (
    <>
      <h1 tabIndex={-1}>Upstream</h1>
      <Status error={act.error} />
      {view !== undefined && (!view.configured
        ? <p>No upstream is configured: proxy calls answer 503.</p>
        : (
          <>
            <dl class="facts">
              <dt>Backend</dt><dd>{view.backend ?? 'custom'}</dd>
              <dt>Ready</dt><dd>{view.ready === true ? 'yes' : `no${view.reason ? `: ${view.reason}` : ''}`}</dd>
            </dl>
            <h2>Credentials</h2>
            {view.credentials.length === 0
              ? <p>This backend reports no credential pool.</p>
              : (
                <TableScroll label="Pooled credentials"><table>
                  <caption>Pooled credentials</caption>
                  <thead><tr><th scope="col">Credential</th><th scope="col">State</th><th scope="col">Details</th></tr></thead>
                  <tbody>{view.credentials.map(c => <tr key={c.name}><th scope="row">{c.name}</th><td>{c.state.replace('_', ' ')}</td><td>{c.state === 'cooling' ? `until ${when(c.until)}` : c.reason ?? ''}</td></tr>)}</tbody>
                </table></TableScroll>
                )}
            <h2>Models by family</h2>
            <p class="help">Base models ({view.families.reduce((n, f) => n + f.models.filter(m => m.stage !== 'shutdown').length, 0)} served now); each also has its -search and thinking variants. A shut-down model's name is answered by its replacement.</p>
            {view.families.map(f => (
              <TableScroll key={f.family} label={`Models of the ${f.family} family`}><table>
                <caption>{f.family}</caption>
                <thead><tr><th scope="col">Model</th><th scope="col">Status</th></tr></thead>
                <tbody>{f.models.map(m => <tr key={m.id} class={m.stage === 'shutdown' ? 'shut-down' : undefined}><th scope="row" class="mono">{m.id}</th><td>{stageOf(m)}{view.unpriced?.includes(m.id) === true ? '; no price known (not in the spend, refused under a dollar budget)' : ''}</td></tr>)}</tbody>
              </table></TableScroll>
            ))}
          </>
          ))}
    </>
  )
}
