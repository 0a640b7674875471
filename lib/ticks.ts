// A work-around for a slow path in Node 20's process.nextTick, which every HTTP request goes
// through several times.
//
// nextTick queues each callback in an object literal with two computed symbol keys. V8 keeps the
// hidden classes (maps) of such objects only while one of them is alive: a full garbage collection
// that runs while no tick is queued frees them, and the next tick builds new ones. The literal's
// inline caches record every new map, and after a few such collections they turn megamorphic for
// the life of the process. Every tick then defines its properties through the runtime, about
// eight times slower (25 → 215 ns a call, measured in `npm start` processes here). A server that
// loads many entries at start-up runs several full collections before it serves a request, so it
// nearly always ends up on the slow path; a smaller one does some of the time.
//
// Keeping one tick object alive keeps its maps, and the caches stay monomorphic.
import { createHook } from 'node:async_hooks'

let kept: object | null = null

/**
 * Keeps one of process.nextTick's queue objects (a finished tick of a no-op) for the life of the
 * process. Call it once, early; later calls do nothing. An async hook is on only for the one
 * nextTick call made here.
 */
export function keepTickShape (): void {
  if (kept !== null) return
  const hook = createHook({
    init (_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && kept === null) kept = resource
    }
  })
  hook.enable()
  try {
    process.nextTick(noop)
  } finally {
    hook.disable()
  }
}

/** Whether keepTickShape has kept a tick object. */
export function tickShapeKept (): boolean {
  return kept !== null
}

function noop (): void {}
