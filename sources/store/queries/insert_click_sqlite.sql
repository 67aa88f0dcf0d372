-- Puts one lost click back into the events schema (repair --apply); ts is
-- RFC 3339 UTC text with milliseconds.
INSERT INTO clicks (ts, link_id, country_code)
VALUES (:ts, :link_id, :country_code)
