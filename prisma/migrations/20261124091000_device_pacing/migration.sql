-- Per-device pacing (packages/queue/src/device-pacing.ts): at most N messages handed in any minute, hour, day.
ALTER TABLE "devices" ADD COLUMN "rate_limit_per_minute" INTEGER,
ADD COLUMN "rate_limit_per_hour" INTEGER,
ADD COLUMN "rate_limit_per_day" INTEGER;
