import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

/** OpenAPI generated from the routes' TypeBox schemas: UI at `/docs`, document at `/docs/json`. */
export const docs = fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'smsgw', description: 'Self-hosted SMS gateway', version: '0.1.0' },
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
            bearer: { type: 'http', scheme: 'bearer', description: 'An API key or a JWT from POST /api/v1/auth/token.' },
          },
        },
        security: [{ apiKey: [] }, { bearer: [] }],
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'docs' },
);
