import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { publicUrl } from '@smsgw/config';
import { SECURITY_SCHEMES, TAGS, applyDocs, documentRoute } from './openapi.ts';
import { webhooksSection } from './openapi-webhooks.ts';

/** OpenAPI generated from the routes' TypeBox schemas: UI at `/docs`, document at `/docs/json`. */
export const docs = fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'smsgw', description: 'Self-hosted SMS gateway', version: '0.1.0' },
        servers: [{ url: publicUrl(app.config), description: 'PUBLIC_URL' }],
        tags: TAGS,
        components: { securitySchemes: SECURITY_SCHEMES },
        security: [{ apiKey: [] }, { bearer: [] }],
      },
      transform: documentRoute,
      transformObject: (document) => {
        if (!('openapiObject' in document)) return document.swaggerObject;
        const { openapiObject } = document;
        const components = (openapiObject.components ??= {}) as { schemas?: Record<string, unknown> };
        return { ...applyDocs(openapiObject), webhooks: webhooksSection((components.schemas ??= {})) } as typeof openapiObject;
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'docs', dependencies: ['resources'] },
);
