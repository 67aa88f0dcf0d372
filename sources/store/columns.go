package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// A link is its bytes
//
// Elido's link ids are case-sensitive byte strings: lnk_A and lnk_a, lnk_b
// and "lnk_b " are four links. The events preset's per-link and
// per-country queries group by the bytes whatever the column's collation
// (MySQL: CAST(… AS BINARY); PostgreSQL: COLLATE "C"; SQLite: COLLATE
// BINARY), and a repair compares clicks byte for byte in Go. Where the
// store itself cannot keep two such links apart, no query can: a CHAR
// column drops trailing spaces, and a daily counter keyed by a collation
// that is not byte-wise (a unique key under utf8mb4_general_ci, a PAD
// SPACE _bin collation, a nondeterministic ICU collation, citext, SQLite's
// NOCASE or RTRIM) has already merged their counts. linkCheck finds these
// in the catalog, and the per-link counts of such a store are refused with
// ErrNotByteWise, naming the column and its collation or type: a day's
// links are then unverifiable, never wrong.

// ErrNotByteWise marks per-link counts the store cannot give byte for
// byte: its link_id column merges links that differ only by case, trailing
// spaces or Unicode normalisation. The day totals are unaffected.
var ErrNotByteWise = errors.New("the store cannot tell every link apart, so its per-link counts are unverifiable")

// TextColumn is a text column of the store, as its catalog declares it.
type TextColumn struct {
	Table, Name string
	Type        string // the catalog's type name: varchar, char, text, bpchar, citext…
	Collation   string // "" where the catalog names none
	// Charset is what the column's text is stored in: the column's
	// character set on MySQL, the database's encoding on PostgreSQL, ""
	// on SQLite (UTF-8).
	Charset string
	// byteWise says two values the column's collation calls equal are
	// the same bytes, so a unique key on it keeps every link apart.
	byteWise bool
	// holds says which characters Charset holds; nil: every one, or a
	// character set this package does not know.
	holds func(rune) bool
}

func (c TextColumn) String() string { return c.Table + "." + c.Name }

// fixed reports whether the column's type pads or trims trailing spaces
// (CHAR): lnk_b and "lnk_b " read back as one.
func (c TextColumn) fixed() bool {
	switch strings.ToLower(c.Type) {
	case "char", "bpchar", "character", "binary":
		return true
	}
	return false
}

// merges says why c cannot keep apart links whose bytes differ, when it
// cannot: a CHAR column. The key of a counter (the daily preset) whose
// collation is not byte-wise merges only the links it calls equal, which
// MergedLinks asks the server for, link by link.
func (c TextColumn) merges(d dsn.Dialect) error {
	switch {
	case c.fixed():
		return fmt.Errorf("%w: %s is %s, which drops trailing spaces (lnk_b and \"lnk_b \" read back as one link): make it %s",
			ErrNotByteWise, c, strings.ToUpper(c.Type), varText(d))
	}
	return nil
}

// Note is what a report says of a group of links the store keeps as
// one counter (MergedLinks): which they are, by how much they differ
// together, and why their own counts are unverifiable.
// known is false where some of them were not checked, and their delta
// together is not known.
func (m Merged) Note(group []string, delta int64, known bool) string {
	quoted := make([]string, len(group))
	for i, id := range group {
		quoted[i] = fmt.Sprintf("%q", id)
	}
	together := fmt.Sprintf("together they differ by %+d", delta)
	if !known {
		together = "not all of them were checked"
	}
	return fmt.Sprintf("links %s are one counter in the store: %s, under which links that differ only by case, trailing spaces or Unicode normalisation are equal "+
		"(Elido counts them apart); %s, and each one's own count is unverifiable. To count them apart, give the column %s",
		strings.Join(quoted, ", "), m.Column, together, m.hint)
}

func varText(d dsn.Dialect) string {
	if d == dsn.MySQL {
		return "VARCHAR"
	}
	return "text"
}

// byteWiseHint names the collations that compare bytes, in d.
func byteWiseHint(d dsn.Dialect) string {
	switch d {
	case dsn.MySQL:
		return "a byte-wise collation (utf8mb4_nopad_bin on MariaDB, utf8mb4_0900_bin on MySQL 8, or VARBINARY)"
	case dsn.SQLite:
		return "the BINARY collation (the default)"
	}
	return `a deterministic collation (COLLATE "C", or the database's default) and the type text`
}

// Holds says why c cannot hold s, when its character set lacks one of
// s's characters (a 4-byte character in a utf8mb3 column, anything but
// Latin-1 in a latin1 one): an insert would fail, or store something else.
// A character set it does not know is left to the insert.
func (c TextColumn) Holds(s string) error {
	if c.holds == nil {
		return nil
	}
	for _, r := range s {
		if r == utf8.RuneError || !c.holds(r) {
			return fmt.Errorf("column %s is %s, which cannot hold %q (U+%04X)", c, c.Charset, r, r)
		}
	}
	return nil
}

// mysqlCharsetHolds returns which characters MySQL's character set
// called name holds, or nil when it holds every one or is not known.
func mysqlCharsetHolds(name string) func(rune) bool {
	switch strings.ToLower(name) {
	case "utf8mb3", "utf8", "ucs2":
		return func(r rune) bool { return r <= 0xFFFF }
	case "ascii":
		return func(r rune) bool { return r < 0x80 }
	case "latin1":
		// MySQL's latin1 is Windows-1252, with its five unused bytes
		// holding the C1 controls U+0081, U+008D, U+008F, U+0090, U+009D.
		return func(r rune) bool {
			switch {
			case r < 0x80, r >= 0xA0 && r <= 0xFF:
				return true
			case r >= 0x80 && r < 0xA0:
				return r == 0x81 || r == 0x8D || r == 0x8F || r == 0x90 || r == 0x9D
			}
			return strings.ContainsRune(cp1252High, r)
		}
	}
	return nil
}

// cp1252High are the characters Windows-1252 puts at 0x80–0x9F.
const cp1252High = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"

// Columns are the events schema's text columns.
type Columns struct {
	Link, Country TextColumn
}

// Holds says why the store cannot hold a click's link id or country,
// naming the column and its character set, when it cannot.
func (c Columns) Holds(link, country string) error {
	if err := c.Link.Holds(link); err != nil {
		return fmt.Errorf("link id %q: %w", link, err)
	}
	if err := c.Country.Holds(country); err != nil {
		return fmt.Errorf("country %q: %w", country, err)
	}
	return nil
}

// EventColumns reads from the catalog what the events schema's link_id and
// country_code are, for a repair to refuse a click they cannot hold before
// anything is written. A column the catalog does not show is a zero
// TextColumn, which holds anything.
func (s *Store) EventColumns(ctx context.Context) (Columns, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cols, err := s.columnsOf(ctx, "clicks")
	if err != nil {
		return Columns{}, err
	}
	return Columns{Link: cols["link_id"], Country: cols["country_code"]}, nil
}

// linkCheck says why q's per-link counts cannot be byte for byte on s, if
// they cannot (ErrNotByteWise); a custom query is its author's to write.
// The catalog is read once per table (columnsOf).
func (s *Store) linkCheck(ctx context.Context, q Query) error {
	if q.name != PresetEvents && q.name != PresetDaily {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	table := "clicks"
	if q.name == PresetDaily {
		table = "click_counts"
	}
	cols, err := s.columnsOf(ctx, table)
	if err != nil {
		return err
	}
	if link, ok := cols["link_id"]; ok {
		return link.merges(s.dialect)
	}
	return nil
}

// columnsOf returns table's text columns (textColumns), read from the
// catalog once per Store: a repair asks for the clicks table's twice, for
// the plan (EventColumns) and for its reads (linkCheck). A failed read is
// not kept: the next call reads again. The caller holds s.mu.
func (s *Store) columnsOf(ctx context.Context, table string) (map[string]TextColumn, error) {
	if cols, ok := s.catalog[table]; ok {
		return cols, nil
	}
	cols, err := s.textColumns(ctx, table)
	if err != nil {
		return nil, fmt.Errorf("read the columns of table %s: %w", table, err)
	}
	if s.catalog == nil {
		s.catalog = map[string]map[string]TextColumn{}
	}
	s.catalog[table] = cols
	return cols, nil
}

// textColumns reads table's link_id and country_code from the catalog; a
// table or column that does not exist is absent (the count query reports
// it).
func (s *Store) textColumns(ctx context.Context, table string) (map[string]TextColumn, error) {
	switch s.dialect {
	case dsn.MySQL:
		return s.mysqlColumns(ctx, table)
	case dsn.SQLite:
		return s.sqliteColumns(ctx, table)
	}
	return s.postgresColumns(ctx, table)
}

// postgresColumnsSQL reads link_id and country_code of $1 on the
// search_path: their type, collation, whether it is deterministic (a
// nondeterministic one calls different bytes equal), and the database's
// encoding.
const postgresColumnsSQL = `SELECT a.attname, t.typname, coalesce(co.collname, ''), coalesce(co.collisdeterministic, true),
       current_setting('server_encoding')
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
  AND a.attname IN ('link_id', 'country_code')`

func (s *Store) postgresColumns(ctx context.Context, table string) (map[string]TextColumn, error) {
	return s.readColumns(ctx, postgresColumnsSQL, table, func(rows *sql.Rows, c *TextColumn) error {
		var deterministic bool
		if err := rows.Scan(&c.Name, &c.Type, &c.Collation, &deterministic, &c.Charset); err != nil {
			return err
		}
		// citext compares case-blind whatever its collation.
		c.byteWise = deterministic && c.Type != "citext"
		if c.Charset == "LATIN1" { // ISO 8859-1; UTF8 holds every character
			c.holds = func(r rune) bool { return r <= 0xFF }
		}
		return nil
	})
}

// readColumns runs query, a catalog read of table's columns, and reads
// each row into a TextColumn with scan.
func (s *Store) readColumns(ctx context.Context, query, table string, scan func(*sql.Rows, *TextColumn) error) (map[string]TextColumn, error) {
	rows, err := s.db.QueryContext(ctx, query, table)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	out := map[string]TextColumn{}
	for rows.Next() {
		c := TextColumn{Table: table}
		if err := scan(rows, &c); err != nil {
			return nil, err
		}
		out[c.Name] = c
	}
	return out, rows.Err()
}

const mysqlColumnsSQL = `SELECT COLUMN_NAME, DATA_TYPE, COALESCE(CHARACTER_SET_NAME, 'binary'), COALESCE(COLLATION_NAME, 'binary')
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME IN ('link_id', 'country_code')`

// mysqlName is a character set or collation name that can be written in
// a statement as it is.
var mysqlName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

func (s *Store) mysqlColumns(ctx context.Context, table string) (map[string]TextColumn, error) {
	cols, err := s.readColumns(ctx, mysqlColumnsSQL, table, func(rows *sql.Rows, c *TextColumn) error {
		return rows.Scan(&c.Name, &c.Type, &c.Charset, &c.Collation)
	})
	if err != nil {
		return nil, err
	}
	for name, c := range cols {
		c.holds = mysqlCharsetHolds(c.Charset)
		if c.byteWise, err = s.mysqlByteWise(ctx, c); err != nil {
			return nil, err
		}
		cols[name] = c
	}
	return cols, nil
}

// mysqlByteWise reports whether c's collation compares bytes: binary, or
// a _bin collation that is NO PAD, which the server itself is asked
// (MariaDB's utf8mb4_bin, and MySQL's before utf8mb4_0900_bin, are PAD
// SPACE: 'lnk_b' = 'lnk_b ').
func (s *Store) mysqlByteWise(ctx context.Context, c TextColumn) (bool, error) {
	switch {
	case c.Collation == "binary":
		return true, nil
	case !strings.HasSuffix(c.Collation, "_bin") || !mysqlName.MatchString(c.Collation) || !mysqlName.MatchString(c.Charset):
		return false, nil
	}
	var padded bool
	q := fmt.Sprintf("SELECT CONVERT('a' USING %s) COLLATE %s = CONVERT('a ' USING %s) COLLATE %s", c.Charset, c.Collation, c.Charset, c.Collation)
	if err := s.db.QueryRowContext(ctx, q).Scan(&padded); err != nil {
		return false, fmt.Errorf("compare in collation %s: %w", c.Collation, classify(err))
	}
	return !padded, nil
}

// sqliteColumnsSQL reads the collation each unique key of $1 compares
// link_id and country_code in (a column has no other collation SQLite
// reports): NOCASE or RTRIM there merges counters.
const sqliteColumnsSQL = `SELECT c.name, c.type, coalesce((
    SELECT x.coll FROM pragma_index_list(?1) AS l, pragma_index_xinfo(l.name) AS x
    WHERE l."unique" AND x.key AND x.name = c.name AND x.coll <> 'BINARY' LIMIT 1), '')
FROM pragma_table_info(?1) AS c
WHERE c.name IN ('link_id', 'country_code')`

func (s *Store) sqliteColumns(ctx context.Context, table string) (map[string]TextColumn, error) {
	return s.readColumns(ctx, sqliteColumnsSQL, table, func(rows *sql.Rows, c *TextColumn) error {
		var typ sql.NullString
		if err := rows.Scan(&c.Name, &typ, &c.Collation); err != nil {
			return err
		}
		c.Type = "text" // SQLite's CHAR(n) is TEXT: it neither pads nor trims
		c.byteWise = c.Collation == ""
		return nil
	})
}
