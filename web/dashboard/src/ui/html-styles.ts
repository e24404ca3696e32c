// An email's style sheets apart from its markup, for HtmlPreview (html-preview.tsx).

/** The HTML without its `<style>` elements, and their rules. */
export function splitStyles(html: string): { markup: string; css: string } {
  const rules: string[] = [];
  const markup = html.replace(/<style\b[^>]*>([\s\S]*?)<\/style\s*>/gi, (_whole, css: string) => {
    rules.push(css);
    return '';
  });
  return { markup, css: rules.join('\n') };
}
