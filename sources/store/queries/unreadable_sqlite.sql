-- The number of rows of the events schema whose ts SQLite cannot read as an
-- instant, one row with one column (clicks): julianday(ts) is NULL for an
-- epoch number, an offset without a colon, garbage or NULL. Such a click
-- could belong to any day, so it cannot be left out silently. The
-- expression index on julianday(ts) makes this an index search.
SELECT count(*) AS clicks
FROM clicks
WHERE julianday(ts) IS NULL
