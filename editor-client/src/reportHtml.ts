// The report webview's HTML. Pure (markdown-it only), so its safety is unit-tested.
//
// The report quotes code and text written by the author of the change under review, who is the
// attacker here: raw HTML is escaped (html: false), images are not loaded (their alt text is
// shown), links are shown as text with their address but never become clickable, and the
// Content-Security-Policy allows no script and no network at all.
import MarkdownIt from 'markdown-it';

export interface ReportSection {
  title?: string;
  markdown: string;
}

function renderer(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  md.disable(['image']);
  md.renderer.rules.link_open = (tokens, idx) => {
    const href = tokens[idx].attrGet('href') ?? '';
    return `<span class="link" title="${md.utils.escapeHtml(href)}">`;
  };
  md.renderer.rules.link_close = (tokens, idx) => {
    // Find the matching link_open to show where the link pointed.
    for (let i = idx - 1; i >= 0; i--) {
      if (tokens[i].type === 'link_open') {
        const href = tokens[i].attrGet('href') ?? '';
        return `</span> <code class="href">${md.utils.escapeHtml(href)}</code>`;
      }
    }
    return '</span>';
  };
  return md;
}

const md = renderer();

export function renderMarkdown(markdown: string): string {
  return md.render(markdown);
}

export function escapeHtml(text: string): string {
  return md.utils.escapeHtml(text);
}

/** No network, no images; scripts only with `script: true`, and then only the page's own
 *  (the one element carrying the nonce), never an inline handler or one from the content. */
export function contentSecurityPolicy(nonce: string, options: { script?: boolean } = {}): string {
  const script = options.script ? `'nonce-${nonce}'` : "'none'";
  return `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'none'; script-src ${script}; font-src 'none'; connect-src 'none'; form-action 'none'; frame-src 'none'`;
}

export const REPORT_STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 1.5em 2em; line-height: 1.5; }
pre, code { font-family: var(--vscode-editor-font-family); }
pre { background: var(--vscode-textCodeBlock-background); padding: .6em; overflow-x: auto; }
table { border-collapse: collapse; } th, td { border: 1px solid var(--vscode-panel-border); padding: .2em .5em; }
.link { text-decoration: underline dotted; } .href { opacity: .7; }
section + section { border-top: 1px solid var(--vscode-panel-border); margin-top: 1.5em; }
.empty { opacity: .7; font-style: italic; }`;

/** A whole page: the sections in order (the report first; later sections, e.g. debate turns). */
export function reportPage(sections: readonly ReportSection[], nonce: string): string {
  const body = sections.length === 0
    ? '<p class="empty">No report yet: run a review.</p>'
    : sections.map((s) => {
      const title = s.title ? `<h2>${escapeHtml(s.title)}</h2>` : '';
      return `<section>${title}${renderMarkdown(s.markdown)}</section>`;
    }).join('\n');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy(nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">${REPORT_STYLE}</style><title>Redline Report</title></head>
<body>${body}</body></html>`;
}
