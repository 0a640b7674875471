// sharp (libvips) loaded on first use: importing it costs a process about 23 MB of RSS, which a
// server that never stores or transforms an image, and a `lectern` command, need not pay.
import type Sharp from 'sharp'

let loading: Promise<typeof Sharp> | undefined

/**
 * sharp, with the process-wide settings Lectern needs: one libvips thread per image (the
 * transform limiter bounds the images) and no operation cache (variants are cached on disk).
 */
export async function loadSharp (): Promise<typeof Sharp> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    sharp.concurrency(1)
    sharp.cache(false)
    return sharp
  })
  return await loading
}
