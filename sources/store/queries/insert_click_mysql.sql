-- Puts one lost click back into the events schema (repair --apply). :ts is
-- a UTC wall-clock DATETIME(6) value: the writer's session time_zone is
-- +00:00, so a TIMESTAMP ts stores the same instant.
INSERT INTO clicks (ts, link_id, country_code)
VALUES (:ts, :link_id, :country_code)
