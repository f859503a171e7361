// The console's page: sign-in, then pages chosen by the address's fragment (#/keys), so the server serves one page.
import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, fmt, usd, when } from './api.ts'
import { AppContext, Status, isUnauthorized, useAction, useApp, useConfirm, usePasswordPrompt, TableScroll } from './shared.tsx'
import type { Me } from './shared.tsx'
import { KeysPage } from './keys.tsx'
import { UsagePage } from './usage.tsx'
import { UsersPage, UpstreamPage } from './admin.tsx'

function useRoute (): string {
  const [route, setRoute] = useState(location.hash.slice(1) || '/')
  useEffect(() => {
    const on = (): void => setRoute(location.hash.slice(1) || '/')
    window.addEventListener('hashchange', on)
    return () => window.removeEventListener('hashchange', on)
  }, [])
  return route
}

function Login ({ onIn }: { onIn: () => Promise<void> }) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const { busy, error, run } = useAction()
  return (
    <main id="main" class="login">
      <h1>Sign in to Gatehouse</h1>
      <form onSubmit={(e) => { e.preventDefault(); void run(async () => { await api('POST', 'login', { username, password }); await onIn(); return 'Signed in.' }) }}>
        <label for="login-user">Username</label>
        <input id="login-user" name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        <label for="login-password">Password</label>
        <input id="login-password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>Sign in</button>
        <Status error={error} />
      </form>
    </main>
  )
}

/** The page a sign-in link opens (#/welcome/<token>): its holder chooses a password and is signed in. */
function Welcome ({ token, onIn }: { token: string, onIn: () => Promise<void> }) {
  const [password, setPassword] = useState('')
  const [again, setAgain] = useState('')
  const { busy, error, run } = useAction()
  const mismatch = again !== '' && again !== password
  return (
    <main id="main" class="login">
      <h1>Welcome to Gatehouse</h1>
      <p>Choose the password you will sign in with. This link works once.</p>
      <form onSubmit={(e) => {
        e.preventDefault()
        if (mismatch) return
        void run(async () => {
          await api('POST', 'sign-in-link', { token, password })
          // The token leaves the address bar and the history entry once it is spent.
          history.replaceState(null, '', location.pathname)
          window.dispatchEvent(new HashChangeEvent('hashchange'))
          await onIn()
          return 'Signed in.'
        })
      }}>
        <label for="welcome-password">New password</label>
        <input id="welcome-password" type="password" autocomplete="new-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <label for="welcome-again">The same password again</label>
        <input id="welcome-again" type="password" autocomplete="new-password" required value={again} aria-invalid={mismatch} aria-describedby="welcome-match" onInput={(e) => setAgain(e.currentTarget.value)} />
        <p id="welcome-match" class="hint" aria-live="polite">{mismatch ? 'The two passwords differ.' : ''}</p>
        <button type="submit" disabled={busy || mismatch}>Set password and sign in</button>
        <Status error={error} />
      </form>
    </main>
  )
}

const LIMIT_NAMES: Record<string, string> = { rpm: 'Requests per minute', tpm: 'Tokens per minute', tokens_per_day: 'Tokens per UTC day', concurrent: 'Calls at once', usd_per_day: 'Spend per UTC day', usd_per_month: 'Spend per UTC month' }
/** A limit's amount as shown: the dollar budgets (in dollars on the wire) as money. */
const amount = (name: string, n: number): string => name.startsWith('usd_') ? usd.format(n) : fmt.format(n)

function Home () {
  const { me } = useApp()
  const { limits, used } = me.standing
  return (
    <>
      <h1 tabIndex={-1}>Hello, {me.user.username}</h1>
      <dl class="facts">
        <dt>Access level</dt><dd>{me.user.access_level}</dd>
        <dt>Email</dt><dd>{me.user.email ?? 'none'}</dd>
        <dt>Member since</dt><dd>{when(me.user.date_joined)}</dd>
        <dt>This sign-in ends</dt><dd>{when(me.session.expires_at)}</dd>
      </dl>
      <h2>Your limits</h2>
      <TableScroll label="Your limits"><table>
        <caption>Limits in effect and what is left in the current window</caption>
        <thead><tr><th scope="col">Limit</th><th scope="col">Allowed</th><th scope="col">Used now</th><th scope="col">Left now</th></tr></thead>
        <tbody>
          {Object.keys(LIMIT_NAMES).map(name => {
            const limit = limits[name]
            const u = used?.[name]
            return (
              <tr key={name}>
                <th scope="row">{LIMIT_NAMES[name]}</th>
                <td>{limit == null ? 'unlimited' : amount(name, limit)}</td>
                <td>{u === undefined ? '—' : amount(name, u)}</td>
                <td data-left={name}>{limit == null ? 'unlimited' : u === undefined ? '—' : amount(name, Math.max(0, limit - u))}</td>
              </tr>
            )
          })}
        </tbody>
      </table></TableScroll>
      {!me.can_create_keys && <p>API keys need level {me.key_min_level} or above: ask an admin to raise your level.</p>}
    </>
  )
}

interface SessionView { id: string, device: string, created_at: string, expires_at: string, current: boolean }

function SessionsPage () {
  const { confirm } = useApp()
  const [list, setList] = useState<SessionView[] | undefined>(undefined)
  const { busy, error, done, run } = useAction()
  const load = async (): Promise<void> => { setList(await api('GET', 'sessions')) }
  useEffect(() => { void run(async () => { await load(); return '' }) }, [])
  return (
    <>
      <h1 tabIndex={-1}>Your sessions</h1>
      <p>Every place you are signed in, the newest first. Ending a session signs that device out at once.</p>
      <button type="button" disabled={busy} onClick={() => { void run(async () => { await confirm('Sign out every other device? They need your password to come back.', 'Sign out the others'); const r = await api('DELETE', 'sessions'); await load(); return `Ended ${r.ended} other session(s).` }) }}>Sign out everywhere else</button>
      <Status error={error} done={done} />
      {list !== undefined && (
        <TableScroll label="Signed-in sessions"><table>
          <caption>Signed-in sessions</caption>
          <thead><tr><th scope="col">Device</th><th scope="col">Signed in</th><th scope="col">Expires</th><th scope="col">Action</th></tr></thead>
          <tbody>
            {list.map(s => (
              <tr key={s.id}>
                <td>{s.device}{s.current ? ' (this browser)' : ''}</td>
                <td>{when(s.created_at)}</td>
                <td>{when(s.expires_at)}</td>
                <td>{s.current ? '—' : <button type="button" class="secondary" aria-label={`End the session of ${s.device} from ${when(s.created_at)}`} onClick={() => { void run(async () => { await confirm(`End the session of ${s.device} from ${when(s.created_at)}? That device is signed out at once.`, 'End session'); await api('DELETE', `sessions/${s.id}`); await load(); return 'Session ended.' }) }}>End</button>}</td>
              </tr>
            ))}
          </tbody>
        </table></TableScroll>
      )}
    </>
  )
}

function AccountPage () {
  const { me, refresh, sensitive } = useApp()
  const [email, setEmail] = useState(me.user.email ?? '')
  const [password, setPassword] = useState('')
  const mail = useAction()
  const pass = useAction()
  return (
    <>
      <h1 tabIndex={-1}>Your account</h1>
      <form onSubmit={(e) => { e.preventDefault(); void mail.run(async () => { await sensitive(pw => api('PUT', 'account', { email, current_password: pw })); await refresh(); return 'Email saved.' }) }}>
        <h2>Email</h2>
        <label for="acct-email">Email address</label>
        <input id="acct-email" type="email" autocomplete="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <button type="submit" disabled={mail.busy}>Save email</button>
        <Status error={mail.error} done={mail.done} />
      </form>
      <form onSubmit={(e) => { e.preventDefault(); void pass.run(async () => { await sensitive(pw => api('PUT', 'account', { password, current_password: pw })); setPassword(''); return 'Password changed; your other sessions were ended.' }) }}>
        <h2>Password</h2>
        <label for="acct-password">New password</label>
        <input id="acct-password" type="password" autocomplete="new-password" minLength={8} required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button type="submit" disabled={pass.busy}>Change password</button>
        <Status error={pass.error} done={pass.done} />
      </form>
    </>
  )
}

const PAGES: Array<{ path: string, label: string, admin?: boolean }> = [
  { path: '/', label: 'Overview' },
  { path: '/keys', label: 'API keys' },
  { path: '/usage', label: 'Usage' },
  { path: '/sessions', label: 'Sessions' },
  { path: '/account', label: 'Account' },
  { path: '/admin/users', label: 'Users', admin: true },
  { path: '/admin/usage', label: 'All usage', admin: true },
  { path: '/admin/upstream', label: 'Upstream', admin: true },
]

function Shell ({ me, onOut }: { me: Me, onOut: () => void }) {
  const route = useRoute()
  const main = useRef<HTMLElement>(null)
  useEffect(() => { main.current?.querySelector<HTMLElement>('h1')?.focus() }, [route])
  const pages = PAGES.filter(p => p.admin !== true || me.is_admin)
  const page = pages.find(p => p.path === route) ?? pages[0]
  let body
  switch (page.path) {
    case '/keys': body = <KeysPage />; break
    case '/usage': body = <UsagePage scope="own" />; break
    case '/sessions': body = <SessionsPage />; break
    case '/account': body = <AccountPage />; break
    case '/admin/users': body = <UsersPage />; break
    case '/admin/usage': body = <UsagePage scope="admin" />; break
    case '/admin/upstream': body = <UpstreamPage />; break
    default: body = <Home />
  }
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); main.current?.querySelector<HTMLElement>('h1')?.focus() }}>Skip to content</a>
      <header>
        <p class="brand">Gatehouse</p>
        <nav aria-label="Console">
          <ul>
            {pages.map(p => <li key={p.path}><a href={`#${p.path}`} aria-current={p === page ? 'page' : undefined}>{p.label}</a></li>)}
          </ul>
        </nav>
        <p class="who">{me.user.username} ({me.user.access_level}) <button type="button" class="secondary" onClick={onOut}>Sign out</button></p>
      </header>
      <main id="main" ref={main}>{body}</main>
    </>
  )
}

function App () {
  const route = useRoute()
  const [me, setMe] = useState<Me | null | undefined>(undefined)
  const [error, setError] = useState<unknown>(undefined)
  const prompt = usePasswordPrompt()
  const asking = useConfirm()
  async function refresh (): Promise<void> {
    try {
      const answer = await api<Me & { signed_in: boolean }>('GET', 'me')
      setMe(answer.signed_in ? answer : null)
      setError(undefined)
    } catch (err) {
      if (isUnauthorized(err)) setMe(null)
      else setError(err)
    }
  }
  useEffect(() => { void refresh() }, [])
  if (error !== undefined) return <main id="main"><h1>Gatehouse console</h1><Status error={error} /></main>
  if (me === undefined) return <main id="main"><h1>Gatehouse console</h1><p>Loading…</p></main>
  const welcome = /^\/welcome\/([^/]+)$/.exec(route)
  if (welcome !== null) return <Welcome token={welcome[1]} onIn={refresh} />
  if (me === null) return <Login onIn={refresh} />
  const out = (): void => { void api('POST', 'logout').finally(() => { setMe(null); location.hash = '' }) }
  return (
    <AppContext.Provider value={{ me, refresh, sensitive: prompt.sensitive, confirm: asking.confirm }}>
      <Shell me={me} onOut={out} />
      {prompt.dialog}
      {asking.dialog}
    </AppContext.Provider>
  )
}

render(<App />, document.getElementById('app')!)
