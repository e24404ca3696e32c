// An email's HTML shown as a mail client shows it, in a frame that runs none of it. The frame's document
// comes from `srcdoc`, so it lives under the dashboard's Content-Security-Policy, which refuses `<style>`
// elements (`style-src 'self'`) and remote images: the message's own style sheets are taken out of the
// markup and given to the frame's document as constructed style sheets (which that policy lets apply),
// so a template or broadcast with a `<style>` block previews as it will read. Remote images stay off.
import { useCallback, useMemo, useRef } from 'react';
import { splitStyles } from './html-styles.ts';

/**
 * `sandbox="allow-same-origin"` without `allow-scripts`: nothing in the message runs, and the dashboard may
 * reach the frame's document to give it the style sheet.
 */
export function HtmlPreview({ html, title, className }: { html: string; title: string; className?: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const { markup, css } = useMemo(() => splitStyles(html), [html]);
  const applyStyles = useCallback(() => {
    const view = frame.current?.contentWindow as (Window & typeof globalThis) | null | undefined;
    const doc = frame.current?.contentDocument;
    if (!view || !doc) return;
    if (css === '') {
      doc.adoptedStyleSheets = [];
      return;
    }
    const sheet = new view.CSSStyleSheet();
    try {
      sheet.replaceSync(css);
    } catch {
      // Rules the browser cannot parse are left out, as a mail client leaves them out.
    }
    doc.adoptedStyleSheets = [sheet];
  }, [css]);
  return (
    <iframe
      ref={frame}
      className={className}
      title={title}
      sandbox="allow-same-origin"
      referrerPolicy="no-referrer"
      srcDoc={markup}
      onLoad={applyStyles}
    />
  );
}
