# One image for every smsgw process; docker-compose.yml picks the command.
FROM node:20-slim
WORKDIR /app
RUN corepack enable
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml pnpmw tsconfig.json prisma.config.ts ./
COPY prisma ./prisma
COPY scripts ./scripts
COPY packages ./packages
COPY apps ./apps
RUN pnpm install --frozen-lockfile && pnpm build
USER node
ENV HOST=0.0.0.0
CMD ["node", "--enable-source-maps", "dist/api.mjs"]
