package repair

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clickrecon/clickrecon/sources/store"
)

// mysqlTSLayout is how an instant is written in MySQL's repair.sql: the
// UTC wall clock, which the script's session (time_zone +00:00) stores
// as is in a DATETIME ts and as that instant in a TIMESTAMP one.
const mysqlTSLayout = "2006-01-02 15:04:05.000"

// writeMySQL writes repair.sql for MySQL and MariaDB, to be run with the
// mysql client, which stops at the first error: the connection then
// closes and the open transaction is rolled back.
//
// Its text means the same whatever the session's sql_mode (an
// --init-command or the server's): every text value is a hex literal
// converted to utf8mb4 (CONVERT(X'…' USING utf8mb4)), so no quote,
// backslash (NO_BACKSLASH_ESCAPES or not), NUL byte or emoji can end it or
// change it; identifiers are bare and strings hold no double quote
// (ANSI_QUOTES). The session is made strict (a value that does not fit
// fails the script rather than being truncated) and REPEATABLE READ, and
// waits at most 10s for a lock. As repair --apply does, each hour the
// plan compared is re-counted with a locking read (LOCK IN SHARE MODE):
// InnoDB's next-key locks keep a receiver's insert into the hour waiting
// until COMMIT, and one not yet committed is waited for and counted. When
// an hour no longer holds the count the plan saw, a prepared statement on
// a table that cannot exist fails the script, naming why, before any
// insert; and each INSERT … SELECT … WHERE @clickrecon_ok = 1 inserts
// nothing then, even when the client is told to go on after errors.
func writeMySQL(w io.Writer, plans []DayPlan) error {
	var b strings.Builder
	b.WriteString("-- clickrecon repair: the clicks Elido has and this store lost, for the\n")
	b.WriteString("-- reference events schema (table clicks) on MySQL or MariaDB. Review,\n")
	b.WriteString("-- then run it with the mysql client (mysql DB < repair.sql), which stops\n")
	b.WriteString("-- at the first error and so writes nothing; or use clickrecon repair\n")
	b.WriteString("-- --apply, which re-checks each day before writing.\n")
	b.WriteString("SET SESSION time_zone = '+00:00';\n")
	b.WriteString("SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES');\n")
	b.WriteString("SET SESSION innodb_lock_wait_timeout = 10;\n")
	b.WriteString("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;\n")
	b.WriteString("START TRANSACTION;\n")
	wall := wallZone(plans)
	writeMySQLChecks(&b, plans, wall)
	err := eachAdd(plans, mysqlString, func(p DayPlan, h HourPlan) {
		fmt.Fprintf(&b, "-- %s, hour from %s: %d to add\n", p.Day, h.From.Format(tsLayout), len(h.Add))
	}, func(c Click, link, country string) {
		fmt.Fprintf(&b, "INSERT INTO clicks (ts, link_id, country_code) SELECT '%s', %s, %s FROM DUAL WHERE @clickrecon_ok = 1;\n",
			mysqlTS(c.TS, wall), link, country)
	})
	if err != nil {
		return err
	}
	b.WriteString("COMMIT;\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// mysqlChangedTable names the table that cannot exist whose SELECT fails
// the script when an hour moved: MySQL's error quotes it, so it says why
// (an identifier holds at most 64 characters).
const mysqlChangedTable = "`store changed since the plan: nothing written; plan again`"

// writeMySQLChecks writes the locking re-count of every hour the plan
// compared, on the days that add clicks, and the statement that fails the
// script when one moved.
func writeMySQLChecks(b *strings.Builder, plans []DayPlan, wall *time.Location) {
	b.WriteString("SET @clickrecon_ok = 1;\n")
	hours := checkedHours(plans)
	if len(hours) == 0 {
		return
	}
	b.WriteString("-- Other writers of these hours wait until COMMIT (this waits at most 10s\n")
	b.WriteString("-- for theirs), and nothing is written unless each hour still holds\n")
	b.WriteString("-- what the plan saw.\n")
	for _, h := range hours {
		fmt.Fprintf(b, "SELECT count(*) INTO @clickrecon_n FROM clicks WHERE ts >= '%s' AND ts < '%s' LOCK IN SHARE MODE;\n",
			mysqlBound(h.From, wall), mysqlBound(h.To, wall))
		fmt.Fprintf(b, "SET @clickrecon_ok = IF(@clickrecon_n = %d, @clickrecon_ok, 0); -- the hour from %s held %d\n",
			h.Store, h.From.UTC().Format(tsLayout), h.Store)
	}
	b.WriteString("SET @clickrecon_check = IF(@clickrecon_ok = 1, 'DO 0', 'SELECT 1 FROM " + mysqlChangedTable + "');\n")
	b.WriteString("PREPARE clickrecon_check FROM @clickrecon_check;\n")
	b.WriteString("EXECUTE clickrecon_check;\n")
	b.WriteString("DEALLOCATE PREPARE clickrecon_check;\n")
}

// mysqlTS is a click's instant as repair.sql writes it into ts: the UTC
// wall clock, or, for a DATETIME holding wall-clock times in wall, its
// wall-clock time there.
func mysqlTS(t time.Time, wall *time.Location) string {
	if wall != nil {
		return t.In(wall).Format(mysqlTSLayout)
	}
	return t.UTC().Format(mysqlTSLayout)
}

// mysqlBound is an hour's bound as repair.sql compares ts with it: the UTC
// wall clock, or the first wall-clock time in wall that the wall-clock
// rule reads as the bound or later (store.MySQLWallBound).
func mysqlBound(t time.Time, wall *time.Location) string {
	if wall != nil {
		return store.MySQLWallBound(t, wall)
	}
	return t.UTC().Format(mysqlTSLayout)
}

// mysqlString writes s as a utf8mb4 string whose bytes are a hex literal:
// its meaning depends on no sql_mode, and any byte, NUL included, is
// itself. Invalid UTF-8 is an error: utf8mb4 cannot hold it.
func mysqlString(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%q is not valid UTF-8, which MySQL's utf8mb4 text cannot hold", s)
	}
	return "CONVERT(X'" + hex.EncodeToString([]byte(s)) + "' USING utf8mb4)", nil
}
