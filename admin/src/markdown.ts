// A small Markdown renderer for the editor's preview. Everything is HTML-escaped first and
// only a fixed set of tags is produced, so an entry can never inject markup into the admin.

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

/** Only web, mail and relative links; anything else (javascript:, data:) becomes inert. */
function safeUrl (url: string): string {
  const trimmed = url.trim()
  return /^(https?:|mailto:|\/|#|\.\.?\/)/i.test(trimmed) || !/^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : '#'
}

function inline (escaped: string): string {
  const codes: string[] = []
  let out = escaped.replace(/`([^`]+)`/g, (_m, code: string) => {
    codes.push(`<code>${code}</code>`)
    return `\u0000${codes.length - 1}\u0000`
  })
  out = out
    .replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, (_m, alt: string, url: string) => `<img alt="${alt}" src="${safeUrl(url)}">`)
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, text: string, url: string) => `<a href="${safeUrl(url)}" rel="noopener noreferrer" target="_blank">${text}</a>`)
    .replace(/\*\*([^*]+)\*\*|__([^_]+)__/g, (_m, a?: string, b?: string) => `<strong>${a ?? b ?? ''}</strong>`)
    .replace(/\*([^*]+)\*|\b_([^_]+)_\b/g, (_m, a?: string, b?: string) => `<em>${a ?? b ?? ''}</em>`)
    .replace(/~~([^~]+)~~/g, '<del>$1</del>')
  // eslint-disable-next-line no-control-regex
  return out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => codes[Number(i)] ?? '')
}

export function renderMarkdown (source: string): string {
  const lines = source.replace(/\r\n?/g, '\n').split('\n')
  const html: string[] = []
  let paragraph: string[] = []
  // Written by the flush helpers too: declared wide so TypeScript does not narrow it to null.
  let list = null as { tag: 'ul' | 'ol', items: string[] } | null

  const flushParagraph = (): void => {
    if (paragraph.length > 0) html.push(`<p>${inline(escapeHtml(paragraph.join('\n'))).replace(/\n/g, '<br>')}</p>`)
    paragraph = []
  }
  const flushList = (): void => {
    if (list !== null) html.push(`<${list.tag}>${list.items.map(i => `<li>${inline(escapeHtml(i))}</li>`).join('')}</${list.tag}>`)
    list = null
  }

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    const fence = /^```/.exec(line)
    if (fence !== null) {
      flushParagraph(); flushList()
      const code: string[] = []
      while (++i < lines.length && !/^```/.test(lines[i] ?? '')) code.push(lines[i] ?? '')
      html.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`)
      continue
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading !== null) {
      flushParagraph(); flushList()
      const level = heading[1]?.length ?? 1
      html.push(`<h${level}>${inline(escapeHtml(heading[2] ?? ''))}</h${level}>`)
      continue
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      flushParagraph(); flushList()
      html.push('<hr>')
      continue
    }
    const quote = /^>\s?(.*)$/.exec(line)
    if (quote !== null) {
      flushParagraph(); flushList()
      html.push(`<blockquote>${inline(escapeHtml(quote[1] ?? ''))}</blockquote>`)
      continue
    }
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line)
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line)
    if (bullet !== null || numbered !== null) {
      flushParagraph()
      const tag = bullet !== null ? 'ul' : 'ol'
      if (list?.tag !== tag) flushList()
      list ??= { tag, items: [] }
      list.items.push((bullet ?? numbered)?.[1] ?? '')
      continue
    }
    if (line.trim() === '') {
      flushParagraph(); flushList()
      continue
    }
    flushList()
    paragraph.push(line)
  }
  flushParagraph(); flushList()
  return html.join('\n')
}
