import { defineConfig } from 'prisma/config';

// Used only by the Prisma CLI when authoring migrations (see README, "Migrations").
// The service applies migrations with its own migrator (packages/db/src/migrator.ts).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/smsgw' },
});
