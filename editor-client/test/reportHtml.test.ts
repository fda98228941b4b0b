import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reportPage, renderMarkdown } from '../src/reportHtml';

test('HTML in the report (quoted from the change under review) is shown, not run', () => {
  const html = renderMarkdown('# Summary\n\n<script>alert(1)</script> <img src=x onerror=alert(1)>\n\n```py\nx = "</pre><script>"\n```');
  assert.doesNotMatch(html, /<script>/);
  assert.doesNotMatch(html, /<img/);
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(html, /<h1>Summary<\/h1>/);
});

test('links are not clickable and images are not loaded', () => {
  const html = renderMarkdown('[click](https://evil.example/x) ![pixel](https://evil.example/p.png) [js](javascript:alert(1))');
  assert.doesNotMatch(html, /<a /);
  assert.doesNotMatch(html, /href=/);
  assert.doesNotMatch(html, /<img/);
  assert.match(html, /<code class="href">https:\/\/evil.example\/x<\/code>/);
});

test('the page allows no script and loads nothing; sections keep their order', () => {
  const page = reportPage([{ markdown: '# Report' }, { title: 'Turn 1 <b>', markdown: 'text' }], 'N0nce');
  assert.match(page, /script-src 'none'/);
  assert.match(page, /default-src 'none'/);
  assert.match(page, /<style nonce="N0nce">/);
  assert.ok(page.indexOf('<h1>Report</h1>') < page.indexOf('<h2>Turn 1 &lt;b&gt;</h2>'));
  assert.match(reportPage([], 'n'), /No report yet/);
});
