// Pieces every page uses: the signed-in context, the password prompt for sensitive actions, messages in words.
import { createContext } from 'preact'
import type { ComponentChildren } from 'preact'
import { useContext, useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, needsPassword, wrongPassword } from './api.ts'

export interface Me {
  user: { user_id: string, username: string, email: string | null, access_level: string, date_joined: string, disabled: boolean }
  session: { created_at: string, expires_at: string, reauth_until: string }
  is_admin: boolean
  can_create_keys: boolean
  key_min_level: string
  console_path: string
  standing: { limits: Record<string, number | null>, used: Record<string, number> | null }
  models: string[]
}

export interface Ctx {
  me: Me
  refresh (): Promise<void>
  /** Runs `action`; when the API asks for the current password, asks the user for it and runs it again with it. */
  sensitive<T> (action: (password?: string) => Promise<T>): Promise<T>
  /** Asks `question` in a dialog whose confirming button says `yes`; throws Cancelled when the user declines. */
  confirm (question: string, yes: string): Promise<void>
}

export const AppContext = createContext<Ctx>(undefined as unknown as Ctx)
export const useApp = (): Ctx => useContext(AppContext)

/** A status line: errors from the API in words, successes politely announced. */
/** A table that scrolls sideways in its own box on a narrow screen, so the page does not; focusable, for the keyboard. */
export function TableScroll ({ label, children }: { label: string, children: ComponentChildren }) {
  return <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>{children}</div>
}

export function Status ({ error, done }: { error?: unknown, done?: string }) {
  if (error !== undefined && error !== null) {
    const text = error instanceof Error ? error.message : typeof error === 'string' ? error : 'Something went wrong.'
    return <p class="status error" role="alert">{text}</p>
  }
  return <p class="status ok" role="status" aria-live="polite">{done ?? ''}</p>
}

/** A form action's state: running, its error, its success message. */
export function useAction () {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  async function run (task: () => Promise<string | undefined | void>): Promise<void> {
    setBusy(true)
    setError(undefined)
    setDone(undefined)
    try {
      const message = await task()
      setDone(message ?? 'Done.')
    } catch (err) {
      if (!(err instanceof Cancelled)) setError(err)
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, done, run }
}

export class Cancelled extends Error {}

/** The re-auth prompt: a wrong password or a lockout is told here, beside the Confirm button, and may be tried again. */
export function PasswordDialog ({ error, busy, onDone }: { error?: string, busy: boolean, onDone: (password: string | undefined) => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const input = useRef<HTMLInputElement>(null)
  const [value, setValue] = useState('')
  useEffect(() => {
    dialog.current?.showModal()
  }, [])
  useEffect(() => {
    if (error !== undefined) { setValue(''); input.current?.focus() }
  }, [error])
  return (
    <dialog ref={dialog} aria-labelledby="pw-title" onCancel={(e) => { e.preventDefault(); onDone(undefined) }}>
      <form method="dialog" onSubmit={(e) => { e.preventDefault(); onDone(value) }}>
        <h2 id="pw-title">Confirm it is you</h2>
        <p>You signed in a while ago. Enter your current password to go on.</p>
        <label for="pw-current">Current password</label>
        <input ref={input} id="pw-current" type="password" autocomplete="current-password" required value={value} onInput={(e) => setValue(e.currentTarget.value)} aria-describedby={error === undefined ? undefined : 'pw-error'} aria-invalid={error === undefined ? undefined : true} />
        <div class="row">
          <button type="submit" disabled={busy}>Confirm</button>
          <button type="button" class="secondary" onClick={() => onDone(undefined)}>Cancel</button>
        </div>
        {error !== undefined && <p id="pw-error" class="status error" role="alert">{error}</p>}
      </form>
    </dialog>
  )
}

interface Pending { resolve: (password: string | undefined) => void, error?: string, busy: boolean }

/** The password prompt's state for the App: `sensitive` and the dialog to render. */
export function usePasswordPrompt (): { sensitive: Ctx['sensitive'], dialog: ComponentChildren } {
  const [pending, setPending] = useState<Pending | undefined>(undefined)
  async function sensitive<T> (action: (password?: string) => Promise<T>): Promise<T> {
    try {
      return await action()
    } catch (err) {
      if (!needsPassword(err)) throw err
    }
    let error: string | undefined
    for (;;) {
      const password = await new Promise<string | undefined>(resolve => setPending({ resolve, error, busy: false }))
      if (password === undefined) {
        setPending(undefined)
        throw new Cancelled('Cancelled')
      }
      try {
        const done = await action(password)
        setPending(undefined)
        return done
      } catch (err) {
        // A wrong password or a lockout is the prompt's own answer: said beside its button, the prompt stays.
        if (!wrongPassword(err) && !(err instanceof ApiError && err.status === 429)) {
          setPending(undefined)
          throw err
        }
        error = (err as Error).message
      }
    }
  }
  const done = (password: string | undefined): void => {
    if (pending === undefined) return
    setPending({ ...pending, busy: password !== undefined })
    pending.resolve(password)
  }
  return { sensitive, dialog: pending === undefined ? null : <PasswordDialog error={pending.error} busy={pending.busy} onDone={done} /> }
}

/** A question before an action that cannot be undone (revoke, disable, end a session): the answer is the user's. */
export function ConfirmDialog ({ question, yes, onDone }: { question: string, yes: string, onDone: (ok: boolean) => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    dialog.current?.showModal()
  }, [])
  return (
    <dialog ref={dialog} role="alertdialog" aria-labelledby="confirm-title" aria-describedby="confirm-question" onCancel={(e) => { e.preventDefault(); onDone(false) }}>
      <form method="dialog" onSubmit={(e) => { e.preventDefault(); onDone(true) }}>
        <h2 id="confirm-title">Are you sure?</h2>
        <p id="confirm-question">{question}</p>
        <div class="row">
          <button type="submit" class="danger">{yes}</button>
          <button type="button" class="secondary" onClick={() => onDone(false)}>Cancel</button>
        </div>
      </form>
    </dialog>
  )
}

/** The confirmation's state for the App: `confirm` and the dialog to render. */
export function useConfirm (): { confirm: Ctx['confirm'], dialog: ComponentChildren } {
  const [asking, setAsking] = useState<{ question: string, yes: string, resolve: (ok: boolean) => void } | undefined>(undefined)
  async function confirm (question: string, yes: string): Promise<void> {
    const ok = await new Promise<boolean>(resolve => setAsking({ question, yes, resolve }))
    setAsking(undefined)
    if (!ok) throw new Cancelled('Cancelled')
  }
  return { confirm, dialog: asking === undefined ? null : <ConfirmDialog question={asking.question} yes={asking.yes} onDone={asking.resolve} /> }
}

export const isUnauthorized = (err: unknown): boolean => err instanceof ApiError && err.status === 401 && !needsPassword(err)
