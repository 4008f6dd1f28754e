-- A rate limit whose provider counts requests per clock second ('fixed' window): the first
-- free place at or after `us` (epoch microseconds), where each second has `per_second`
-- places `lead_us + i × spacing_us` µs into it. Whole microseconds throughout, so a place
-- computed again from a stored instant is the same place. Mirrors nextPlaceInSecond in
-- packages/jobs/src/limits.ts (and the Redis store's script).
CREATE FUNCTION "beton_rate_next_place"(us bigint, per_second int, lead_us bigint, spacing_us bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT CASE WHEN i < per_second THEN second * 1000000 + lead_us + i * spacing_us ELSE (second + 1) * 1000000 + lead_us END
  FROM (SELECT second, CASE WHEN into_us <= lead_us THEN 0 ELSE (into_us - lead_us + spacing_us - 1) / spacing_us END AS i
        FROM (SELECT floor(us / 1000000.0)::bigint AS second, us - floor(us / 1000000.0)::bigint * 1000000 AS into_us) a) b
$$;
