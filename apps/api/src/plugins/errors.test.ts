import { describe, expect, it } from 'vitest';
import { RouteMethods } from './errors.ts';

describe('RouteMethods', () => {
  const routes = new RouteMethods();
  routes.add('/api/sms/send', 'POST');
  routes.add('/api/v1/sms/:id', 'GET');
  routes.add('/api/v1/sms/received', ['GET']);
  routes.add('/api/v1/groups/:id/members/:contactId', 'DELETE');
  routes.add('/docs/static/*', 'GET');

  it.each([
    ['/api/sms/send', ['POST']],
    ['/api/v1/sms/abc', ['GET', 'HEAD']],
    ['/api/v1/sms/received', ['GET', 'HEAD']],
    ['//api//v1/groups/g/members/c', ['DELETE']],
    ['/docs/static/a/b.js', ['GET', 'HEAD']],
    ['/api/v1/sms', []],
    ['/api/v1/sms/a/b', []],
    ['/api/sms/send.json', []],
  ])('%s allows %j', (path, methods) => {
    expect(routes.allowed(path)).toEqual(methods);
  });
});
