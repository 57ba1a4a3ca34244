#!/usr/bin/env bash
# Proves that the committed migrations produce exactly prisma/schema.prisma. Two scratch databases
# are built: one from the SQL that Prisma's schema engine writes for the whole schema (the offline
# WebAssembly engine of ../shared/tools/prisma-offline, README "Migrations"; it needs no database
# for that), one by applying prisma/migrations with smsgw's own migrator. Their catalogues (columns
# with types, nullability and defaults; constraints; indexes; enums) must be the same, whatever the
# order in which the columns were added. CHECK constraints are left out: Prisma's schema cannot state
# them, so the migrations add them by hand. Skipped, with a notice, where that tool is not present.
#
# (`prisma migrate diff --from-migrations` cannot be used: with the WebAssembly engine every diff
# that involves a database comes back empty, so it proved nothing.)
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

psql_() { psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
from_schema="smsgw_check_schema_$$"
from_migrations="smsgw_check_migrations_$$"
work=$(mktemp -d)
cleanup() {
  psql_ -c "DROP DATABASE IF EXISTS $from_schema WITH (FORCE)" -c "DROP DATABASE IF EXISTS $from_migrations WITH (FORCE)" >/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
psql_ -c "CREATE DATABASE $from_schema" -c "CREATE DATABASE $from_migrations" >/dev/null

# The WebAssembly engine sometimes fails to start ("Starting schema-engine-wasm"): try up to three times.
for attempt in 1 2 3; do
  if ./pnpmw exec prisma migrate diff --from-empty --to-schema prisma/schema.prisma --script >"$work/schema.sql" 2>"$work/err"; then
    break
  fi
  cat "$work/err"
  if [ "$attempt" = 3 ] || ! grep -q 'Starting schema-engine-wasm' "$work/err"; then exit 1; fi
  echo "check-migrations: the schema engine did not start; trying again"
done
grep -q 'CREATE TABLE' "$work/schema.sql" || { echo "check-migrations: the schema engine wrote no SQL"; cat "$work/schema.sql"; exit 1; }
psql_ -d "$from_schema" -f "$work/schema.sql" >/dev/null 2>&1 || psql_ -d "$from_schema" -f "$work/schema.sql"
DATABASE_URL="postgresql://postgres@127.0.0.1:5432/$from_migrations" ./pnpmw -s db:migrate >/dev/null

catalogue() {
  psql_ -d "$1" <<'SQL'
SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
       || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped AND c.relname <> '_prisma_migrations'
UNION ALL
SELECT 'constraint ' || t.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
  FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
 WHERE n.nspname = 'public' AND t.relname <> '_prisma_migrations' AND k.contype <> 'c'
UNION ALL
SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
UNION ALL
SELECT 'enum ' || t.typname || ' ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
  FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
 WHERE n.nspname = 'public' GROUP BY t.typname
ORDER BY 1;
SQL
}
catalogue "$from_schema" >"$work/schema.txt"
catalogue "$from_migrations" >"$work/migrations.txt"
if ! diff -u --label 'prisma/schema.prisma' --label 'prisma/migrations' "$work/schema.txt" "$work/migrations.txt"; then
  echo "check-migrations: the migrations do not produce prisma/schema.prisma (lines above: - only in the schema, + only in the migrations)"
  exit 1
fi
echo "check-migrations: migrations match prisma/schema.prisma ($(wc -l <"$work/schema.txt") catalogue entries)"
