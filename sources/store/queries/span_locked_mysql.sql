-- The number of clicks in the half-open range [:from, :to), one row with
-- one column (clicks), read by repair inside the day's transaction as a
-- locking read: under REPEATABLE READ, InnoDB takes next-key locks on the
-- range of the ts index it scans, so a receiver's insert into the range
-- waits for the repair's commit, and an insert not yet committed is
-- waited for and then counted. LOCK IN SHARE MODE is understood by MySQL
-- and MariaDB alike.
SELECT count(*) AS clicks
FROM clicks
WHERE ts >= :from
  AND ts < :to
LOCK IN SHARE MODE
