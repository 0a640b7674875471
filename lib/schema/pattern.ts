// Schema patterns (the `pattern` attribute, contract §5) run on a matcher whose time is linear in
// the value's length, never on V8's backtracking engine: there `^(a+)+$` took 11 s on a value of
// 29 characters, and patterns no checker calls unsafe are quadratic (`a*b` on 100,000 `a`s: 19 s;
// `\s+$` on 100,000 spaces and an `x`: 18 s), so refusing "unsafe" patterns cannot bound the time.
//
// The pattern is parsed (regexpp, the ECMAScript parser ESLint uses) into a Thompson NFA. Each
// character atom (`a`, `[^a-z]`, `\p{L}`, `.`) keeps V8's exact meaning: it is a one-character
// native RegExp, which runs in constant time. A value is matched by a DFA built lazily from the
// NFA (subset construction, one state per set of NFA states reached), so each character costs
// one cached transition; the cache is bounded and starts over when full. Lookaround assertions
// and backreferences cannot run in linear time: a pattern using them is refused (interface.md
// leaves the regex dialect to us; README "Schemas" says which constructs are refused).
import { RegExpParser } from '@eslint-community/regexpp'
import type { Alternative, Element, Quantifier } from '@eslint-community/regexpp/ast'

/** NFA states once counted repetitions are expanded (`\d{4}` is 4): bounds memory and the time per character. */
export const MAX_PATTERN_STATES = 1000
/** DFA states kept per pattern before the cache starts over (each holds a 128-slot ASCII table). */
const MAX_DFA_STATES = 500
/** Transitions on non-ASCII characters kept per pattern before the cache starts over. */
const MAX_OTHER_TRANSITIONS = 20_000

/**
 * Steps (NFA states visited while building DFA states) one value may cost. A cached DFA costs
 * none, so only patterns whose DFA explodes (`[ab]*a[ab]{400}c` on random a/b) reach it: about
 * 10 ms of work, after which the value is refused rather than checked for seconds.
 */
export const MAX_PATTERN_WORK = 4_000_000

/**
 * What making a DFA state costs, in steps (a step is about 1.3 ns here): its allocations
 * (about 1.5 µs), and sorting and keying its NFA states (about 0.1 µs each).
 */
const DFA_STATE_WORK = 1000
const DFA_STATE_WORK_PER_NFA_STATE = 80

/** A value matches, does not, or costs more than MAX_PATTERN_WORK to tell. */
export type PatternResult = 'match' | 'no-match' | 'too-costly'

/** A pattern the matcher cannot run; the message completes "pattern ...". */
export class PatternError extends Error {}

type Assertion = 'start' | 'end' | 'boundary'

type NfaState =
  | { kind: 'char', atom: Atom, next: number }
  | { kind: 'split', out: number[] }
  | { kind: 'assert', assertion: Assertion, next: number }
  | { kind: 'match' }

/** One character atom: V8's own answer for a code point, memoized for ASCII. */
class Atom {
  private readonly re: RegExp
  /** 0: not asked yet, 1: matches, 2: does not. */
  private readonly ascii = new Uint8Array(128)

  constructor (raw: string) {
    this.re = new RegExp(`^(?:${raw})$`, 'u')
  }

  test (cp: number): boolean {
    if (cp < 128) {
      const known = this.ascii[cp] as number
      if (known !== 0) return known === 1
      const yes = this.re.test(String.fromCharCode(cp))
      this.ascii[cp] = yes ? 1 : 2
      return yes
    }
    return this.re.test(String.fromCodePoint(cp))
  }
}

/** Builds the NFA back to front: each element is compiled knowing the state that follows it. */
class NfaBuilder {
  readonly states: NfaState[] = [{ kind: 'match' }]
  private readonly atoms = new Map<string, Atom>()

  private add (state: NfaState): number {
    if (this.states.length >= MAX_PATTERN_STATES) {
      throw new PatternError(`is too large: at most ${MAX_PATTERN_STATES} steps once repetitions such as {1000} are expanded`)
    }
    return this.states.push(state) - 1
  }

  alternatives (alternatives: readonly Alternative[], next: number): number {
    if (alternatives.length === 1) return this.sequence((alternatives[0] as Alternative).elements, next)
    return this.add({ kind: 'split', out: alternatives.map(a => this.sequence(a.elements, next)) })
  }

  private sequence (elements: readonly Element[], next: number): number {
    let state = next
    for (let i = elements.length - 1; i >= 0; i--) state = this.element(elements[i] as Element, state)
    return state
  }

  private element (element: Element, next: number): number {
    switch (element.type) {
      case 'Character':
      case 'CharacterClass':
      case 'CharacterSet':
      case 'ExpressionCharacterClass':
        return this.add({ kind: 'char', atom: this.atom(element.raw), next })
      case 'Group':
      case 'CapturingGroup':
        return this.alternatives(element.alternatives, next)
      case 'Quantifier':
        return this.quantifier(element, next)
      case 'Assertion':
        if (element.kind === 'start' || element.kind === 'end') return this.add({ kind: 'assert', assertion: element.kind, next })
        // \B is refused: V8 also tries it between the two halves of a surrogate pair, where no
        // code-point matcher can stand, so the answers would differ (a property test found it).
        if (element.kind === 'word' && element.negate) throw new PatternError('cannot use \\B (not a word boundary): patterns run on a linear-time matcher')
        if (element.kind === 'word') return this.add({ kind: 'assert', assertion: 'boundary', next })
        throw new PatternError('cannot use lookahead or lookbehind assertions ((?=, (?!, (?<=, (?<!): patterns run on a linear-time matcher')
      case 'Backreference':
        throw new PatternError('cannot use backreferences (\\1, \\k<name>): patterns run on a linear-time matcher')
    }
  }

  /** `x{2,4}` is `x x (x (x)?)?`; `x{2,}` is `x x` then a loop. Greedy or lazy makes no difference to a test. */
  private quantifier (q: Quantifier, next: number): number {
    let state = next
    if (q.max === Infinity) {
      const loop = this.add({ kind: 'split', out: [] })
      const split = this.states[loop] as { out: number[] }
      split.out.push(this.element(q.element, loop), next)
      state = loop
    } else {
      for (let i = q.min; i < q.max; i++) state = this.add({ kind: 'split', out: [this.element(q.element, state), next] })
    }
    for (let i = 0; i < q.min; i++) state = this.element(q.element, state)
    return state
  }

  private atom (raw: string): Atom {
    let atom = this.atoms.get(raw)
    if (atom === undefined) {
      atom = new Atom(raw)
      this.atoms.set(raw, atom)
    }
    return atom
  }
}

/** `\b` in a pattern without the `i` flag: ASCII letters, digits and `_`. */
function isWordChar (cp: number): boolean {
  return (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || (cp >= 48 && cp <= 57) || cp === 95
}

/** Where the matcher stands between two characters: what the assertions look at. */
interface Position {
  atStart: boolean
  atEnd: boolean
  prevWord: boolean
  nextWord: boolean
}

/** A DFA state: the NFA states waiting for the next character, and what the previous one was. */
interface DfaState {
  nfa: readonly number[]
  atStart: boolean
  prevWord: boolean
  ascii: Array<DfaState | undefined>
  other: Map<number, DfaState>
  acceptsAtEnd: boolean | undefined
}

/** The answer "a match was found": testing stops there. */
const MATCHED: DfaState = { nfa: [], atStart: false, prevWord: false, ascii: [], other: new Map(), acceptsAtEnd: true }

export class PatternMatcher {
  private readonly nfa: readonly NfaState[]
  private readonly start: number
  private readonly initial: DfaState
  private dfa = new Map<string, DfaState>()
  private otherTransitions = 0
  /** Stamps of the closure walk: a state is visited once per walk. */
  private readonly seen: Uint32Array
  private stamp = 0
  /** Steps spent on the value being checked. */
  private work = 0

  constructor (readonly source: string) {
    let ast
    try {
      // V8 decides what is valid: the value was compiled with `u` before it got here.
      RegExp(source, 'u')
      ast = new RegExpParser({ ecmaVersion: 2023 }).parsePattern(source, 0, source.length, { unicode: true })
    } catch {
      throw new PatternError('is not a valid regular expression (compiled with the u flag)')
    }
    const builder = new NfaBuilder()
    this.start = builder.alternatives(ast.alternatives, 0)
    this.nfa = builder.states
    this.seen = new Uint32Array(this.nfa.length)
    this.initial = this.intern([], true, false)
  }

  /** Whether the pattern matches somewhere in `value`, as RegExp.prototype.test would tell (unanchored). */
  check (value: string): PatternResult {
    this.work = 0
    let state = this.initial
    for (let i = 0; i < value.length;) {
      const cp = value.codePointAt(i) as number
      i += cp > 0xffff ? 2 : 1
      let next = cp < 128 ? state.ascii[cp] : state.other.get(cp)
      if (next === undefined) {
        if (this.work > MAX_PATTERN_WORK) return 'too-costly'
        next = this.transition(state, cp)
      }
      if (next === MATCHED) return 'match'
      state = next
    }
    state.acceptsAtEnd ??= this.closure(state, { atStart: state.atStart, atEnd: true, prevWord: state.prevWord, nextWord: false }) === null
    return state.acceptsAtEnd ? 'match' : 'no-match'
  }

  private transition (state: DfaState, cp: number): DfaState {
    const nextWord = isWordChar(cp)
    const ready = this.closure(state, { atStart: state.atStart, atEnd: false, prevWord: state.prevWord, nextWord })
    let next = MATCHED
    if (ready !== null) {
      const targets = new Set<number>()
      for (const id of ready) {
        const s = this.nfa[id] as { atom: Atom, next: number }
        if (s.atom.test(cp)) targets.add(s.next)
      }
      next = this.intern([...targets].sort((a, b) => a - b), false, nextWord)
    }
    if (cp < 128) {
      state.ascii[cp] = next
    } else {
      if (++this.otherTransitions > MAX_OTHER_TRANSITIONS) this.forget()
      state.other.set(cp, next)
    }
    return next
  }

  /**
   * The character states reachable from `state` plus a match starting here (the search is
   * unanchored), through splits and the assertions that hold at `at`; null when the match state
   * is reachable.
   */
  private closure (state: DfaState, at: Position): number[] | null {
    const stamp = ++this.stamp
    const ready: number[] = []
    const stack = [this.start, ...state.nfa]
    while (stack.length > 0) {
      const id = stack.pop() as number
      if (this.seen[id] === stamp) continue
      this.seen[id] = stamp
      this.work++
      const s = this.nfa[id] as NfaState
      switch (s.kind) {
        case 'match': return null
        case 'char': ready.push(id); break
        case 'split': for (const out of s.out) stack.push(out); break
        case 'assert': if (holds(s.assertion, at)) stack.push(s.next); break
      }
    }
    return ready
  }

  private intern (nfa: number[], atStart: boolean, prevWord: boolean): DfaState {
    const key = dfaKey(nfa, atStart, prevWord)
    let state = this.dfa.get(key)
    if (state === undefined) {
      this.work += DFA_STATE_WORK + DFA_STATE_WORK_PER_NFA_STATE * nfa.length
      if (this.dfa.size >= MAX_DFA_STATES) this.forget()
      state = { nfa, atStart, prevWord, ascii: new Array<DfaState | undefined>(128), other: new Map(), acceptsAtEnd: undefined }
      this.dfa.set(key, state)
    }
    return state
  }

  /** Starts the cache over; states still held (the current one) lose their transitions too. */
  private forget (): void {
    for (const state of this.dfa.values()) {
      state.ascii.fill(undefined)
      state.other.clear()
    }
    this.dfa = new Map([[dfaKey(this.initial.nfa, true, false), this.initial]])
    this.otherTransitions = 0
  }
}

function dfaKey (nfa: readonly number[], atStart: boolean, prevWord: boolean): string {
  return `${atStart ? 's' : ''}${prevWord ? 'w' : ''}:${nfa.join(',')}`
}

function holds (assertion: Assertion, at: Position): boolean {
  switch (assertion) {
    case 'start': return at.atStart
    case 'end': return at.atEnd
    case 'boundary': return at.prevWord !== at.nextWord
  }
}

/** Why `source` cannot be a schema pattern, or null. */
export function patternProblem (source: string): string | null {
  try {
    // eslint-disable-next-line no-new
    new PatternMatcher(source)
    return null
  } catch (err) {
    if (err instanceof PatternError) return err.message
    throw err
  }
}
