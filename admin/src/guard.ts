// Never lose work: whoever holds unsaved changes registers here (useLeaveGuard), and every way of
// leaving asks first. In-app links, the sidebar, the breadcrumb and the scope pickers ask through
// confirmLeave(); Back and Forward through the router's popstate check (router.ts); closing or
// reloading the tab through the browser's own beforeunload prompt. The question is shown by the
// one ConfirmHost of the shell (ui.tsx), a modal <dialog>: focus stays in it, Escape cancels.
import type { ComponentChildren } from 'preact'
import { useEffect } from 'preact/hooks'

export interface Question {
  title: string
  message: ComponentChildren
  confirmLabel: string
}

type Asker = (question: Question) => Promise<boolean>

const holders = new Set<object>()
let asker: Asker | null = null

/** Installed by the shell's ConfirmHost. */
export function setAsker (next: Asker | null): void {
  asker = next
}

/** Asks `question` in the modal; true when confirmed. Without a host (never in the app) it is refused. */
export async function ask (question: Question): Promise<boolean> {
  return asker === null ? false : await asker(question)
}

export const hasUnsavedChanges = (): boolean => holders.size > 0

/** Resolves true when nothing is unsaved, or the editor chose to leave anyway. */
export async function confirmLeave (): Promise<boolean> {
  if (!hasUnsavedChanges()) return true
  return await ask({
    title: 'Leave without saving?',
    message: 'Your changes to this entry are not saved. If you leave now, they stay only in this browser\'s autosave.',
    confirmLabel: 'Leave this page'
  })
}

const warnOnUnload = (event: BeforeUnloadEvent): void => {
  event.preventDefault()
  // Older Chromium needs a returnValue to show its prompt.
  event.returnValue = ''
}

/** While `dirty`, every way of leaving the page asks first. */
export function useLeaveGuard (dirty: boolean): void {
  useEffect(() => {
    if (!dirty) return
    const token = {}
    holders.add(token)
    if (holders.size === 1) addEventListener('beforeunload', warnOnUnload)
    return () => {
      holders.delete(token)
      if (holders.size === 0) removeEventListener('beforeunload', warnOnUnload)
    }
  }, [dirty])
}
