/**
 * SMS Gate's token scopes (client-go `smsgateway.JWTScope`), which are smsgw permissions: a JWT
 * carrying `scopes` may call a route only with the scope this table gives it, on smsgw's own API as
 * on `/3rdparty/v1` (docs/http-api.md, "Scopes"). API keys, Basic logins and JWTs without the
 * claim (the console's, `POST /api/v1/auth/token`'s) hold every scope.
 */
export const SCOPES = [
  'messages:send',
  'messages:read',
  'messages:list',
  'messages:cancel',
  'messages:export',
  'devices:list',
  'devices:delete',
  'inbox:list',
  'inbox:refresh',
  'webhooks:list',
  'webhooks:write',
  'webhooks:delete',
  'settings:read',
  'settings:write',
  'logs:read',
  'tokens:manage',
  'all:any',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Any scope but this one's exact holder is refused: `all:any` does not grant it (upstream's `WithExact`). */
export const REFRESH_SCOPE = 'tokens:refresh';
export const ALL_SCOPES: Scope = 'all:any';

/** What a route asks of a scoped token: a scope, the refresh scope exactly, or a valid login (any token but a refresh token). */
export type RouteScope = Scope | typeof REFRESH_SCOPE | 'login';

const GATE = '/3rdparty/v1';
const gate = (method: string, paths: string[], scope: RouteScope) =>
  paths.flatMap(
    (path) =>
      [
        [`${method} ${GATE}${path}`, scope],
        [`${method} ${GATE}${path.replace(/^\/(message|device)s/, '/$1')}`, scope],
      ] as const,
  );

/**
 * Every user route, `METHOD url` as Fastify names it (HEAD as its GET), and the scope it needs.
 * Upstream's routes take upstream's scopes (its handlers' `RequireScope`); smsgw's own take the
 * scope of their SMS Gate counterpart; a route with none (keys, contacts, groups, templates,
 * opt-outs, quota, devices' set-up, the event stream) takes `all:any`. A route missing here also takes `all:any`.
 */
export const ROUTE_SCOPES: ReadonlyMap<string, RouteScope> = new Map<string, RouteScope>([
  // SMS Gate's client API, and its deprecated `/message` and `/device` spellings.
  ['GET /3rdparty/v1', 'login'],
  ['GET /3rdparty/v1/', 'login'],
  ...gate('POST', ['/messages'], 'messages:send'),
  ...gate('GET', ['/messages'], 'messages:list'),
  ...gate('GET', ['/messages/:id'], 'messages:read'),
  ...gate('DELETE', ['/messages/:id'], 'messages:cancel'),
  ...gate('GET', ['/devices'], 'devices:list'),
  ...gate('DELETE', ['/devices/:id'], 'devices:delete'),
  [`GET ${GATE}/webhooks`, 'webhooks:list'],
  [`POST ${GATE}/webhooks`, 'webhooks:write'],
  [`DELETE ${GATE}/webhooks/:id`, 'webhooks:delete'],
  [`POST ${GATE}/inbox/refresh`, 'inbox:refresh'],
  [`GET ${GATE}/inbox`, 'inbox:list'],
  [`GET ${GATE}/settings`, 'settings:read'],
  [`PUT ${GATE}/settings`, 'settings:write'],
  [`PATCH ${GATE}/settings`, 'settings:write'],
  [`GET ${GATE}/logs`, 'logs:read'],
  [`POST ${GATE}/auth/token`, 'tokens:manage'],
  [`POST ${GATE}/auth/token/refresh`, REFRESH_SCOPE],
  [`DELETE ${GATE}/auth/token/:jti`, 'tokens:manage'],

  // smsgw's own API.
  ['POST /api/sms/send', 'messages:send'],
  ['POST /api/sms/send-template', 'messages:send'],
  ['GET /api/v1/sms', 'messages:list'],
  ['GET /api/v1/sms/stats', 'messages:list'],
  ['GET /api/v1/sms/:id', 'messages:read'],
  ['GET /api/v1/sms/:id/history', 'messages:read'],
  ['POST /api/v1/sms/:id/cancel', 'messages:cancel'],
  ['POST /api/v1/sms/batch/:batch_id/cancel', 'messages:cancel'],
  ['GET /api/v1/sms/received', 'inbox:list'],
  ['GET /api/v1/sms/received/:id', 'inbox:list'],
  ['GET /api/v1/devices', 'devices:list'],
  ['GET /api/v1/devices/:id', 'devices:list'],
  ['DELETE /api/v1/devices/:id', 'devices:delete'],
  ['GET /api/v1/webhooks', 'webhooks:list'],
  ['GET /api/v1/webhooks/:id', 'webhooks:list'],
  ['GET /api/v1/webhooks/:id/deliveries', 'webhooks:list'],
  ['POST /api/v1/webhooks', 'webhooks:write'],
  ['PATCH /api/v1/webhooks/:id', 'webhooks:write'],
  ['POST /api/v1/webhooks/:id/rotate-secret', 'webhooks:write'],
  ['POST /api/v1/webhooks/:id/test', 'webhooks:write'],
  ['POST /api/v1/webhooks/:id/deliveries/:deliveryId/retry', 'webhooks:write'],
  ['DELETE /api/v1/webhooks/:id', 'webhooks:delete'],
  ['GET /api/v1/settings', 'settings:read'],
  ['PATCH /api/v1/settings', 'settings:write'],
  ['GET /api/v1/sms-gate', 'settings:read'],
]);

/** The scope a route needs of a scoped token (HEAD as GET; a route not in the table: `all:any`). */
export function routeScope(method: string, url: string | undefined): RouteScope {
  return ROUTE_SCOPES.get(`${method === 'HEAD' ? 'GET' : method} ${url ?? ''}`) ?? ALL_SCOPES;
}

/** Whether scopes grant a route's need: the scope itself, else `all:any` for any but the refresh scope. */
export function grants(scopes: readonly string[], need: RouteScope): boolean {
  if (need === 'login') return scopes.some((s) => s !== REFRESH_SCOPE);
  return scopes.includes(need) || (need !== REFRESH_SCOPE && scopes.includes(ALL_SCOPES));
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
