-- Puts one lost click back into the events schema (repair --apply).
INSERT INTO clicks (ts, link_id, country_code)
VALUES (:ts, :link_id, :country_code)
