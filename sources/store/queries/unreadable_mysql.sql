-- The number of rows of the events schema whose click time is no instant,
-- one row with one column (clicks): a NULL ts, or a zero date
-- (0000-00-00 00:00:00, which a server without NO_ZERO_DATE stores for a
-- value it could not read). Both sort before every real time: one range of
-- the index on ts.
SELECT count(*) AS clicks
FROM clicks
WHERE ts IS NULL OR ts < '1000-01-01'
