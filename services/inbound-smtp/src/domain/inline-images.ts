// A received email's html with its inline images (`<img src="cid:…">`) as data: URIs of the parts they name
// (the reference's `html_format=data_uri`, the default); `cid` keeps the references as they are.

export type InlinePart = { contentId: string | null; contentType: string; content: Buffer };

/** Past this many bytes of inlined html the references are kept (`cid`), as the reference does. */
export const MAX_INLINED_HTML_BYTES = 100 * 1024 * 1024;

const CID_REFERENCE = /cid:([^"'\s)>]+)/gi;

/** The Content-IDs an html references (without `cid:`, percent-decoded, lower-case). */
export function referencedContentIds(html: string): Set<string> {
  const ids = new Set<string>();
  for (const match of html.matchAll(CID_REFERENCE)) ids.add(contentIdKey(match[1]!));
  return ids;
}

/**
 * `html` with every `cid:` reference to one of `parts` replaced by its data: URI; a reference to no part is
 * left as it is. Undefined when the result would pass MAX_INLINED_HTML_BYTES (the caller keeps `cid`).
 */
export function inlineImages(html: string, parts: readonly InlinePart[]): string | undefined {
  const byId = new Map<string, InlinePart>();
  for (const part of parts) if (part.contentId) byId.set(contentIdKey(part.contentId), part);
  if (byId.size === 0) return html;
  let size = Buffer.byteLength(html);
  const uris = new Map<string, string>();
  for (const id of referencedContentIds(html)) {
    const part = byId.get(id);
    if (!part) continue;
    const uri = `data:${part.contentType.split(';')[0]?.trim() || 'application/octet-stream'};base64,${part.content.toString('base64')}`;
    size += uri.length;
    if (size > MAX_INLINED_HTML_BYTES) return undefined;
    uris.set(id, uri);
  }
  return html.replace(CID_REFERENCE, (reference, id: string) => uris.get(contentIdKey(id)) ?? reference);
}

function contentIdKey(id: string): string {
  let key = id.trim();
  if (key.startsWith('<') && key.endsWith('>')) key = key.slice(1, -1);
  try {
    key = decodeURIComponent(key);
  } catch {
    // a stray % stays as it is
  }
  return key.toLowerCase();
}
