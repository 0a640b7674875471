import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { describeError } from '../api.js'
import { signIn, type Session } from '../session.js'

export function SignIn ({ message, onSignedIn }: { message: string | null, onSignedIn: (session: Session) => void }): JSX.Element {
  const [key, setKey] = useState('')
  const [reveal, setReveal] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const input = useRef<HTMLInputElement>(null)

  useEffect(() => {
    document.title = 'Sign in · Lectern admin'
    input.current?.focus()
  }, [])

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault()
    const value = key.trim()
    if (value === '') {
      setError('Enter your API key.')
      input.current?.focus()
      return
    }
    setBusy(true)
    setError(null)
    try {
      const session = await signIn(value)
      if (session !== null) {
        setKey('')
        onSignedIn(session)
        return
      }
      setError('This key is not accepted by the server.')
    } catch (err) {
      setError(describeError(err))
    } finally {
      setBusy(false)
    }
    input.current?.focus()
  }

  return (
    <main class='gate signin'>
      <form class='card' onSubmit={e => { void submit(e) }} noValidate aria-labelledby='signin-title'>
        <h1 id='signin-title'>Sign in to Lectern</h1>
        {message !== null && <p class='notice info' role='status'>{message}</p>}
        <p class='muted'>
          Use an API key from the server's <code>CMS_API_KEY</code> or <code>CMS_API_KEYS</code> setting.
          The key is exchanged for a session that every tab of this browser shares until you sign out;
          the page does not keep the key.
        </p>
        <div class={`field ${error !== null ? 'has-error' : ''}`}>
          <label for='api-key'>API key</label>
          <div class='inline'>
            <input
              ref={input} id='api-key' name='api-key' type={(reveal ? 'text' : 'password') as 'password'}
              autoComplete='current-password' spellcheck={false} value={key}
              aria-invalid={error !== null} aria-describedby={error !== null ? 'api-key-error' : undefined}
              onInput={e => { setKey(e.currentTarget.value) }}
            />
            <button type='button' aria-pressed={reveal} onClick={() => { setReveal(r => !r) }}>{reveal ? 'Hide' : 'Show'}</button>
          </div>
          {error !== null && <p id='api-key-error' class='field-error' role='alert'>{error}</p>}
        </div>
        <button type='submit' class='primary' disabled={busy}>{busy ? 'Checking…' : 'Sign in'}</button>
      </form>
    </main>
  )
}
