// What a file is, from its content: the MIME type and, for images, the displayed size.
//
// The client's Content-Type is never used. file-type reads the magic numbers of binary formats.
// Text formats have none, so for a short list of extensions (svg, txt, csv, json, md) the
// extension decides, and only when the first bytes look like that format: valid UTF-8 without
// NUL or other control bytes, and for SVG an `<svg` element near the start, for JSON an opening
// `{` or `[`. Anything else is `application/octet-stream`: an HTML or script file is never
// labelled as something a browser would render or run.
import { open } from 'node:fs/promises'
import { fileTypeFromFile } from 'file-type'
import { loadSharp } from './sharp.js'

export const OCTET_STREAM = 'application/octet-stream'

/** Bytes read for the text checks (file-type's own detection window). */
const SAMPLE_BYTES = 4100

/** The text formats recognised by extension, after the content check. */
const TEXT_TYPES: Record<string, string> = {
  svg: 'image/svg+xml',
  txt: 'text/plain',
  text: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  md: 'text/markdown',
  markdown: 'text/markdown'
}

/** Image types sharp decodes here; the others (HEIC, PSD, ...) get no width/height and no transforms. */
export const DECODABLE_IMAGES: ReadonlySet<string> = new Set([
  'image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif', 'image/tiff', 'image/svg+xml'
])

export interface Inspection {
  mime: string
  width: number | null
  height: number | null
}

export function extensionOf (name: string): string {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : ''
}

async function sample (file: string): Promise<Buffer> {
  const handle = await open(file, 'r')
  try {
    const buffer = Buffer.alloc(SAMPLE_BYTES)
    const { bytesRead } = await handle.read(buffer, 0, SAMPLE_BYTES, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

/** Decodes as UTF-8 (a character cut at the end of the sample is fine) or returns null. */
function asText (bytes: Buffer): string | null {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true })
  } catch {
    return null
  }
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x08\x0b\x0e-\x1f\x7f]/.test(text)) return null
  return text.replace(/^\uFEFF/, '')
}

function looksLikeSvg (text: string): boolean {
  const head = text.trimStart()
  return (head.startsWith('<') && /<svg[\s>]/i.test(text))
}

function textType (ext: string, bytes: Buffer): string {
  const mime = TEXT_TYPES[ext]
  if (mime === undefined) return OCTET_STREAM
  const text = asText(bytes)
  if (text === null) return OCTET_STREAM
  if (ext === 'svg') return looksLikeSvg(text) ? mime : OCTET_STREAM
  if (ext === 'json') return /^\s*[[{]/.test(text) ? mime : OCTET_STREAM
  return mime
}

/** The MIME type of a file from its content (see the top of this file). */
export async function detectMime (file: string, name: string): Promise<string> {
  const ext = extensionOf(name)
  const detected = await fileTypeFromFile(file)
  if (detected !== undefined) {
    // file-type calls any XML document application/xml; an SVG is XML too.
    if (detected.mime === 'application/xml' && ext === 'svg') {
      return textType('svg', await sample(file))
    }
    return detected.mime
  }
  return textType(ext, await sample(file))
}

/** Width and height as displayed (EXIF orientation applied), or nulls when not a decodable image. */
export async function imageSize (file: string, mime: string): Promise<{ width: number | null, height: number | null }> {
  if (!DECODABLE_IMAGES.has(mime)) return { width: null, height: null }
  try {
    // Reading the header only: no pixels are decoded, so no pixel limit is needed here.
    const sharp = await loadSharp()
    const meta = await sharp(file, { limitInputPixels: false }).metadata()
    const width = meta.autoOrient?.width ?? meta.width
    const height = meta.autoOrient?.height ?? meta.height
    return {
      width: Number.isInteger(width) && width > 0 ? width : null,
      height: Number.isInteger(height) && height > 0 ? height : null
    }
  } catch {
    // A truncated or corrupt image is still stored; it just has no size.
    return { width: null, height: null }
  }
}

export async function inspectFile (file: string, name: string): Promise<Inspection> {
  const mime = await detectMime(file, name)
  return { mime, ...(await imageSize(file, mime)) }
}
