/**
 * The simulator's inbox: an HTML page of the stored messages (GET /inbox, /inbox/<id>, and each
 * attachment, the slip PDF, at /inbox/<id>/attachments/<n>) — for people trying Beton locally;
 * no SendGrid API (SendGrid has no inbox: the receiving side is the recipient's mail server).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml, sendText } from './http-util.ts';
import { inboxFontCss } from './inbox-font.ts';
import type { MessageFilter, StoredMessage } from './provider-types.ts';

export function createInbox(deps: {
  messages(filter: MessageFilter): StoredMessage[];
  message(id: string): StoredMessage | undefined;
  filterFromQuery(url: URL): MessageFilter | string;
}): (req: IncomingMessage, res: ServerResponse, url: URL) => void {
  const page = (req: IncomingMessage, title: string, body: string): string =>
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>
  ${inboxFontCss(originOf(req))}
  body{margin:1.5rem;color:#222}
  table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top;font-size:.9rem}
  th{background:#f4f4f4}code{font-size:.8rem;color:#555}a{color:#0a58ca}pre{white-space:pre-wrap;background:#f8f8f8;padding:.75rem}
  </style></head><body>${body}</body></html>`;

  /** The origin the browser reached the simulator at (its Host header): the email body's font is fetched from it. */
  const originOf = (req: IncomingMessage) => `http://${req.headers.host ?? '127.0.0.1'}`;

  return function inbox(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const parts = url.pathname
      .split('/')
      .filter(Boolean)
      .map((p) => decodeURIComponent(p)); // ['inbox', id?, 'attachments'?, n?]
    if (req.method !== 'GET') return sendText(res, 405, 'text/plain', 'method not allowed');
    if (parts.length === 1) {
      const f = deps.filterFromQuery(url);
      if (typeof f === 'string') return sendText(res, 400, 'text/plain', f);
      const list = deps.messages(f).reverse();
      const shown = list.slice(0, 1000);
      const rows = shown
        .map((m) => {
          const args = Object.entries(m.customArgs)
            .map(([k, v]) => `<code>${escapeHtml(k)}=${escapeHtml(v)}</code>`)
            .join('<br>');
          const atts = m.attachments
            .map(
              (a, n) =>
                `<a href="/inbox/${encodeURIComponent(m.id)}/attachments/${n}" target="_blank">${escapeHtml(a.filename)}</a> <small>(${a.size} B)</small>`,
            )
            .join('<br>');
          return `<tr><td>${escapeHtml(m.acceptedAt.toISOString())}</td><td>${escapeHtml(m.to.join(', '))}</td><td><a href="/inbox/${encodeURIComponent(m.id)}">${escapeHtml(m.subject)}</a></td><td>${args}</td><td>${atts}</td></tr>`;
        })
        .join('\n');
      const more = list.length > shown.length ? `<p>Showing the newest ${shown.length} of ${list.length}.</p>` : '';
      return sendText(
        res,
        200,
        'text/html; charset=utf-8',
        page(
          req,
          'Inbox — provider simulator',
          `<h1>Inbox</h1><p>${list.length} message(s) accepted. <a href="/_admin/stats">stats</a></p>${more}
  <table><thead><tr><th>Time</th><th>To</th><th>Subject</th><th>Custom args</th><th>Attachments</th></tr></thead><tbody>
  ${rows}
  </tbody></table>`,
        ),
      );
    }
    const m = parts[1] === undefined ? undefined : deps.message(parts[1]);
    if (!m) return sendText(res, 404, 'text/plain', 'message not found');
    if (parts.length === 2) {
      const html = m.content.find((c) => c.type.toLowerCase() === 'text/html');
      const text = m.content.find((c) => c.type.toLowerCase() === 'text/plain');
      const atts = m.attachments
        .map(
          (a, n) =>
            `<li><a href="/inbox/${encodeURIComponent(m.id)}/attachments/${n}" target="_blank">${escapeHtml(a.filename)}</a> (${escapeHtml(a.type)}, ${a.size} B)</li>`,
        )
        .join('');
      return sendText(
        res,
        200,
        'text/html; charset=utf-8',
        page(
          req,
          m.subject,
          `<p><a href="/inbox">← inbox</a></p><h1>${escapeHtml(m.subject)}</h1>
  <p>From: ${escapeHtml(m.from.email)}<br>To: ${escapeHtml(m.to.join(', '))}<br>Accepted: ${escapeHtml(m.acceptedAt.toISOString())}<br>X-Message-Id: <code>${escapeHtml(m.id)}</code></p>
  <p>Custom args: <code>${escapeHtml(JSON.stringify(m.customArgs))}</code></p>
  <ul>${atts}</ul>
  ${html ? `<iframe sandbox srcdoc="${escapeHtml(`<style>${inboxFontCss(originOf(req))}</style>${html.value}`)}" style="width:100%;height:50vh;border:1px solid #ddd"></iframe>` : ''}
  ${text ? `<pre>${escapeHtml(text.value)}</pre>` : ''}`,
        ),
      );
    }
    if (parts.length === 4 && parts[2] === 'attachments') {
      const a = m.attachments[Number(parts[3])];
      if (!a) return sendText(res, 404, 'text/plain', 'attachment not found');
      if (a.content === null) return sendText(res, 404, 'text/plain', 'attachment bytes not stored (storeAttachmentBytes: false)');
      const isPdf = a.type === 'application/octet-stream' && a.filename.toLowerCase().endsWith('.pdf');
      const safeName = a.filename.replace(/["\\\r\n]/g, '_');
      return sendText(res, 200, isPdf ? 'application/pdf' : a.type, a.content, {
        'Content-Disposition': `inline; filename="${safeName.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(a.filename)}`,
      });
    }
    sendText(res, 404, 'text/plain', 'not found');
  };
}
