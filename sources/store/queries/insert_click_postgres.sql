-- Puts one lost click back into the events schema (repair --apply). :ts is
-- cast to timestamptz: an untyped parameter going into a timestamp
-- (without time zone) column would lose its offset, and the cast writes it
-- as its wall-clock time in the session TimeZone (STORE_TIMESTAMP_TZ).
INSERT INTO clicks (ts, link_id, country_code)
VALUES (:ts::timestamptz, :link_id, :country_code)
