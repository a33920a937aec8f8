/**
 * The dashboard at / : its own files only, with a policy that forbids anything from elsewhere (the charting
 * library sets inline styles on the elements it creates: styles, not scripts, may be inline). Its data comes
 * from the control API.
 */
import { type Context, Hono } from 'hono';
import { dashboardAsset } from './dashboard-assets.js';
import { fail } from './responses.js';

export function dashboardRoutes(deps: { token: string | undefined }): Hono {
  const app = new Hono();
  const page = async (c: Context, file: string) => {
    const asset = dashboardAsset(file);
    if (asset === undefined) return fail(c, 'E_NOT_FOUND', `no such file: ${file}`);
    const { body: text, type } = await asset;
    // The page knows before its first request whether to ask for a token (no 401 to start with).
    const body = file === 'index.html' ? text.replace('{{AUTH}}', deps.token === undefined ? 'local' : 'token') : text;
    return c.body(body, 200, {
      'content-type': type,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      'referrer-policy': 'no-referrer',
    });
  };
  app.get('/', (c) => page(c, 'index.html'));
  app.get('/assets/:file', (c) => page(c, c.req.param('file')));
  return app;
}
