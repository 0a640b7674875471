// Another server process's asset writes (contract §12: "a schema or asset write on one is seen by
// every other within 1 s"), heard on the cluster bus (ASSET_TOPIC). The records are shared (the
// database) and so are the files (CMS_ASSETS_DIR); what each process keeps of its own is what
// goes: where `locate` found the file (remembered for up to a second) and the asset's transform
// variants (the in-memory LRU, and the disk cache when each replica has its own data dir). The
// response cache holds nothing of an asset: asset URLs in entries are made from settings only.
import type { AssetLibrary } from './library.js'
import { ASSETS_PREFIX, parseAssetRecordPath } from './paths.js'
import type { TransformService } from './transforms.js'

/** An asset a process wrote, as announced: its environment and record path (`/api/assets/...`). */
export interface AnnouncedAsset {
  environment: string
  /** Relative to the environment's directory, checked as a request's path is. */
  relative: string
}

/** What an announcement names, or null when it is malformed or not one of `environments`. */
export function announcedAsset (data: Record<string, unknown>, environments: readonly string[]): AnnouncedAsset | null {
  const { environment, path } = data
  // The environment becomes a cache directory: only a configured name may.
  if (typeof environment !== 'string' || !environments.includes(environment)) return null
  if (typeof path !== 'string' || !path.startsWith(ASSETS_PREFIX)) return null
  try {
    return { environment, relative: parseAssetRecordPath(path) }
  } catch {
    return null
  }
}

/** The part of a pino logger this uses. */
export interface RemoteAssetsLogger {
  warn: (obj: object, msg: string) => void
}

export interface RemoteAssetsOptions {
  library: Pick<AssetLibrary, 'forget' | 'forgetAll' | 'roots'>
  transforms: Pick<TransformService, 'invalidateAsset'>
  log: RemoteAssetsLogger
}

/** Acts on asset announcements one after the other, in arrival order. */
export class RemoteAssets {
  private queue: Promise<void> = Promise.resolve()

  constructor (private readonly options: RemoteAssetsOptions) {}

  /** An announcement of ASSET_TOPIC: what this process remembers of that asset goes. */
  changed (data: Record<string, unknown>): Promise<void> {
    const { library, transforms, log } = this.options
    const asset = announcedAsset(data, library.roots.names)
    if (asset === null) {
      log.warn({ data }, 'ignored a malformed asset announcement')
      return this.queue
    }
    this.queue = this.queue.then(async () => {
      library.forget(asset.environment, asset.relative)
      await transforms.invalidateAsset(asset.environment, asset.relative)
    }).catch((err: unknown) => { log.warn({ err }, 'dropping the variants of an asset another process changed failed') })
    return this.queue
  }

  /**
   * Announcements may have been missed: every remembered location goes, so the records (shared)
   * and the files' stat decide again; a variant's key holds its source's mtime and size, so one
   * of a replaced file is never served.
   */
  forgetAll (): void {
    this.options.library.forgetAll()
  }

  /** Resolves when every announcement so far is acted on (tests, shutdown). */
  async settled (): Promise<void> {
    await this.queue
  }
}
