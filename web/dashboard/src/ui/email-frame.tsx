// An email's content framed from the page the API serves for it (a sent email's share page, a received
// email's preview): sandboxed twice (the frame's empty `sandbox`, the page's own `Content-Security-Policy:
// sandbox`), with remote images off (`images=blocked`) until the reader asks (`images=on`), since loading them
// tells whoever serves them that the email was opened.
import { useState } from 'react';

export function EmailFrame({ src, title }: { src: string; title: string }) {
  const [remoteImages, setRemoteImages] = useState(false);
  const url = `${src}${src.includes('?') ? '&' : '?'}images=${remoteImages ? 'on' : 'blocked'}`;
  return (
    <>
      <div className="actions">
        {remoteImages ? (
          <span className="muted small-text">Remote images are shown.</span>
        ) : (
          <button type="button" className="button small" onClick={() => setRemoteImages(true)}>
            Show remote images
          </button>
        )}
      </div>
      <iframe className="preview" title={title} src={url} sandbox="" referrerPolicy="no-referrer" />
    </>
  );
}
