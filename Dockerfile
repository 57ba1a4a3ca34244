# One image for every smsgw process; docker-compose.yml picks the command (docs/operations.md).
FROM node:20-slim
# ./pnpmw runs the pnpm pinned in package.json through corepack; its signature check fails against
# some registries, and nothing may prompt during a build.
ENV COREPACK_INTEGRITY_KEYS=0 COREPACK_ENABLE_DOWNLOAD_PROMPT=0
WORKDIR /app
# Everything below is built by and belongs to the unprivileged user the processes run as, so that
# every command (the CLI too, which rebuilds its bundle) works in the container, and pnpm is fetched
# once, into this user's corepack cache, at build time.
RUN chown node:node /app
USER node
COPY --chown=node:node package.json pnpm-lock.yaml pnpm-workspace.yaml pnpmw tsconfig.json prisma.config.ts ./
COPY --chown=node:node prisma ./prisma
COPY --chown=node:node scripts ./scripts
COPY --chown=node:node packages ./packages
COPY --chown=node:node apps ./apps
RUN ./pnpmw install --frozen-lockfile && ./pnpmw build
ENV HOST=0.0.0.0
CMD ["node", "--enable-source-maps", "dist/api.mjs"]
