// Progress of a long run on a terminal: one line rewritten in place, at most every 100 ms;
// nothing when the output is not a terminal (CI logs stay clean).
export interface ProgressStream {
  isTTY?: boolean
  write: (text: string) => unknown
}

export class Progress {
  private last = 0
  private shown = false

  constructor (private readonly stream: ProgressStream, private readonly now: () => number = Date.now) {}

  /** Shows `text` (e.g. "post/en: 1200 entries") unless the last update was under 100 ms ago. */
  update (text: string): void {
    if (this.stream.isTTY !== true) return
    const at = this.now()
    if (at - this.last < 100) return
    this.last = at
    this.shown = true
    this.stream.write(`\r\u001b[2K${text}`)
  }

  /** Clears the line, so that what follows starts on a clean one. */
  done (): void {
    if (this.shown) this.stream.write('\r\u001b[2K')
    this.shown = false
  }
}
