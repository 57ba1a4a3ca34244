-- AlterTable
ALTER TABLE "users" ADD COLUMN     "disabled_at" TIMESTAMPTZ(3);

-- User names become unique. Users that share a name keep it in order of creation: the oldest keeps
-- the name, each later one gets " (n)" appended, n its rank among them (counting up past a name
-- that is taken already), so that the same data always gets the same names.
DO $$
DECLARE
  duplicate record;
  n integer;
BEGIN
  FOR duplicate IN
    SELECT id, name, rank FROM (
      SELECT id, name, row_number() OVER (PARTITION BY name ORDER BY created_at, id) AS rank FROM "users"
    ) ranked
    WHERE rank > 1
    ORDER BY name, rank
  LOOP
    n := duplicate.rank;
    WHILE EXISTS (SELECT 1 FROM "users" WHERE name = duplicate.name || ' (' || n || ')') LOOP
      n := n + 1;
    END LOOP;
    UPDATE "users" SET name = duplicate.name || ' (' || n || ')' WHERE id = duplicate.id;
  END LOOP;
END $$;

-- CreateIndex
CREATE UNIQUE INDEX "users_name_key" ON "users"("name");
