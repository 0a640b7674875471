// The file store's disk writes, done by a few worker threads with synchronous system calls.
//
// Why: a durable write is a chain of steps (open, write, fsync, close, rename, fsync the
// folder). Chained as promises on the main thread, each step waits for a turn of the event
// loop; under load a turn is long (it serves every request that arrived), so a write takes
// several long turns and throughput falls with the request rate. In a worker the chain runs
// back to back and the main thread pays one message each way.
//
// Each worker takes every job waiting for it at once, writes each file (temp file in the same
// folder, write, fsync, rename) or appends to it (write at the given end, fdatasync: the file
// store's versions), then fsyncs each folder it touched once for all of them and answers. Jobs go to the worker with the fewest outstanding, so fsyncs run in parallel.
// Ordering between jobs is the caller's: the file store never has two jobs for one file out.
import { Worker } from 'node:worker_threads'
import { TransientMap } from '../transient-map.js'

const WORKER_SOURCE = String.raw`
'use strict'
const { parentPort, receiveMessageOnPort, threadId } = require('node:worker_threads')
const fs = require('node:fs')
const path = require('node:path')
let counter = 0

function fsyncDir (dir) {
  const fd = fs.openSync(dir, 'r')
  try {
    fs.fsyncSync(fd)
  } catch (err) {
    // Some file systems cannot fsync a folder; the files themselves are synced.
    if (!['EINVAL', 'EISDIR', 'EPERM', 'ENOTSUP'].includes(err.code)) throw err
  } finally {
    fs.closeSync(fd)
  }
}

function write (job) {
  const temp = path.join(job.dir, '.' + job.name + '.' + process.pid + '-' + threadId + '.' + (++counter) + '.tmp')
  const fd = fs.openSync(temp, 'wx', 0o644)
  try {
    const bytes = Buffer.from(job.text, 'utf8')
    let offset = 0
    while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset)
    fs.fsyncSync(fd)
    fs.closeSync(fd)
    fs.renameSync(temp, path.join(job.dir, job.name))
  } catch (err) {
    try { fs.closeSync(fd) } catch {}
    try { fs.rmSync(temp, { force: true }) } catch {}
    throw err
  }
  return true
}

// Appends at the given position (what the caller knows to be the end of the whole lines) and
// fdatasyncs; makes the file, and its folder, when missing. Returns the folders to sync.
function append (job) {
  const file = path.join(job.dir, job.name)
  const dirs = []
  let fd
  try {
    fd = fs.openSync(file, 'r+')
  } catch (err) {
    if (err.code !== 'ENOENT') throw err
    if (fs.mkdirSync(job.dir, { recursive: true }) !== undefined) dirs.push(path.dirname(job.dir))
    fd = fs.openSync(file, 'wx', 0o644)
    dirs.push(job.dir)
  }
  try {
    const bytes = Buffer.from(job.text, 'utf8')
    let offset = 0
    while (offset < bytes.length) offset += fs.writeSync(fd, bytes, offset, bytes.length - offset, job.position + offset)
    fs.fdatasyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  return dirs
}

function remove (job) {
  try {
    fs.unlinkSync(path.join(job.dir, job.name))
    return true
  } catch (err) {
    if (err.code === 'ENOENT') return false
    throw err
  }
}

parentPort.on('message', first => {
  const jobs = [first]
  for (let m = receiveMessageOnPort(parentPort); m !== undefined; m = receiveMessageOnPort(parentPort)) jobs.push(m.message)
  const results = []
  const touched = new Map()
  for (const job of jobs) {
    try {
      const value = job.op === 'write' ? write(job) : job.op === 'append' ? append(job) : remove(job)
      const result = { id: job.id, value: value !== false }
      results.push(result)
      for (const dir of Array.isArray(value) ? value : value ? [job.dir] : []) (touched.get(dir) || touched.set(dir, []).get(dir)).push(result)
    } catch (err) {
      results.push({ id: job.id, error: { message: String(err.message), code: err.code } })
    }
  }
  for (const [dir, done] of touched) {
    try {
      fsyncDir(dir)
    } catch (err) {
      for (const result of done) result.error = { message: String(err.message), code: err.code }
    }
  }
  parentPort.postMessage(results)
})
`

interface Job {
  id: number
  op: 'write' | 'remove' | 'append'
  dir: string
  name: string
  text?: string
  /** append: where the text goes (the end of the file's whole lines). */
  position?: number
}

interface Result {
  id: number
  value?: boolean
  error?: { message: string, code?: string }
}

interface Pending {
  resolve: (value: boolean) => void
  reject: (err: Error) => void
}

interface Slot {
  worker: Worker
  /** Jobs sent and not yet answered; transient, so answered jobs die young (see transient-map.ts). */
  pending: TransientMap<number, Pending>
  /** Called when the last outstanding job is answered (close waits for it). */
  onIdle: (() => void) | null
}

/** Durable file writes and removals through a small pool of worker threads. */
export class FileWriter {
  private readonly slots: Array<Slot | null>
  private nextId = 0
  private closed = false

  constructor (size = 4) {
    this.slots = new Array<Slot | null>(Math.max(1, size)).fill(null)
  }

  /** Writes `dir/name` atomically and durably (the folder must exist). */
  async write (dir: string, name: string, text: string): Promise<void> {
    await this.run({ id: 0, op: 'write', dir, name, text })
  }

  /**
   * Writes `text` into `dir/name` at `position` and fdatasyncs it (the file and `dir` are made
   * when missing, durably in their folders): an append after the file's whole lines.
   */
  async append (dir: string, name: string, text: string, position: number): Promise<void> {
    await this.run({ id: 0, op: 'append', dir, name, text, position })
  }

  /** Removes `dir/name` durably; false when there was no such file. */
  async remove (dir: string, name: string): Promise<boolean> {
    return await this.run({ id: 0, op: 'remove', dir, name })
  }

  /** Ends the workers once their jobs are answered. */
  async close (): Promise<void> {
    this.closed = true
    const slots = this.slots.filter((s): s is Slot => s !== null)
    this.slots.fill(null)
    await Promise.all(slots.map(async slot => {
      if (slot.pending.size > 0) await new Promise<void>(resolve => { slot.onIdle = resolve })
      await slot.worker.terminate()
    }))
  }

  private run (job: Job): Promise<boolean> {
    if (this.closed) return Promise.reject(new Error('the file writer is closed'))
    job.id = ++this.nextId
    const slot = this.leastBusy()
    return new Promise<boolean>((resolve, reject) => {
      if (slot.pending.size === 0) slot.worker.ref()
      slot.pending.set(job.id, { resolve, reject })
      slot.worker.postMessage(job)
    })
  }

  private leastBusy (): Slot {
    let best: Slot | null = null
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i] ?? this.spawn(i)
      if (slot.pending.size === 0) return slot
      if (best === null || slot.pending.size < best.pending.size) best = slot
    }
    return best as Slot
  }

  private spawn (index: number): Slot {
    // eval: the worker is plain JavaScript, the same under a TypeScript loader and from dist;
    // no execArgv, so a test runner's loaders are not loaded again in each worker.
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] })
    const slot: Slot = { worker, pending: new TransientMap(), onIdle: null }
    worker.unref()
    worker.on('message', (results: Result[]) => {
      for (const result of results) {
        const pending = slot.pending.get(result.id)
        if (pending === undefined) continue
        slot.pending.delete(result.id)
        if (result.error === undefined) {
          pending.resolve(result.value === true)
        } else {
          pending.reject(Object.assign(new Error(result.error.message), { code: result.error.code }))
        }
      }
      // An idle worker does not keep the process alive.
      if (slot.pending.size === 0) {
        worker.unref()
        slot.onIdle?.()
      }
    })
    const fail = (err: Error): void => {
      if (this.slots[index] === slot) this.slots[index] = null
      for (const pending of slot.pending.values()) pending.reject(err)
      slot.pending.clear()
      slot.onIdle?.()
    }
    worker.on('error', fail)
    worker.on('exit', code => { fail(new Error(`file writer thread exited (${code})`)) })
    this.slots[index] = slot
    return slot
  }
}
