#!/usr/bin/env bash
# Proves that the committed migrations produce exactly prisma/schema.prisma, with the Prisma CLI
# running on the offline WebAssembly schema engine in ../shared/tools/prisma-offline (README,
# "Migrations"). Skipped, with a notice, where that tool is not present.
set -euo pipefail
cd "$(dirname "$0")/.."

tool=../shared/tools/prisma-offline
if [ ! -f "$tool/schema-engine-wasm.mjs" ]; then
  echo "check-migrations: $tool not found; skipped"
  exit 0
fi
[ -d "$tool/node_modules" ] || npm ci --prefix "$tool" --no-audit --no-fund --loglevel=error
export PRISMA_SCHEMA_ENGINE_BINARY
PRISMA_SCHEMA_ENGINE_BINARY=$(realpath "$tool/schema-engine-wasm.mjs")

# The CLI replays the migrations into a scratch database to compare them with the schema.
scratch="smsgw_migration_check_$$"
psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $scratch" >/dev/null
trap 'psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS $scratch WITH (FORCE)" >/dev/null' EXIT
# The WebAssembly engine sometimes fails to start ("Starting schema-engine-wasm"): try up to three times.
for attempt in 1 2 3; do
  if out=$(DATABASE_URL="postgresql://postgres@127.0.0.1:5432/$scratch" ./pnpmw exec prisma migrate diff \
    --from-migrations prisma/migrations --to-schema prisma/schema.prisma --exit-code 2>&1); then
    break
  fi
  echo "$out"
  if [ "$attempt" = 3 ] || ! grep -q 'Starting schema-engine-wasm' <<<"$out"; then exit 1; fi
  echo "check-migrations: the schema engine did not start; trying again"
done
echo "check-migrations: migrations match prisma/schema.prisma"
