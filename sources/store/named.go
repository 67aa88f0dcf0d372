package store

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clickrecon/clickrecon/internal/dsn"
)

// namedQuery is a query split around its :name parameters: the text is
// parts[0] name[0] parts[1] name[1] ... parts[len(names)].
//
// sqlx.Named is not used to compile queries: it reads "::" as an escaped
// colon (so ts::date reaches the database as ts:date), rejects :day::date,
// and takes a colon inside a string literal or a comment ('10:30',
// "-- e.g. 00:00") for a parameter. Custom queries are written by users in
// plain PostgreSQL or SQLite, so they are scanned with the quoting rules of
// those dialects instead.
type namedQuery struct {
	parts []string
	names []string
	// err, when set, is why the text cannot run in the dialect it was
	// parsed for: bind returns it. A custom query is parsed for every
	// dialect before the store's is known, and MySQL reads some text
	// (a '#', a '?') differently: that must not fail the query on the
	// others.
	err error
}

// parseNamed splits query around its named parameters. It rejects a
// parameter other than :day, :from, :to and :tz, a positional parameter
// ($1), and more than one statement.
func parseNamed(query string) (namedQuery, error) {
	return parseNamedWith(query, allowedParam, useNamed)
}

// parseNamedWith is parseNamed for a contract whose parameters allowed
// accepts, hint naming them in errors.
func parseNamedWith(query string, allowed func(string) bool, hint string) (namedQuery, error) {
	return scanNamed(query, allowed, hint, false)
}

// parseNamedMySQL is parseNamed with MySQL's lexical rules: a backslash
// escapes the next byte inside '...' and "..." (the server's default, and
// the rule under which a query hides no parameter in a string either way),
// '#' and "-- " start a comment, comments do not nest, there are no dollar
// quotes, and '?' is a positional parameter.
func parseNamedMySQL(query string, allowed func(string) bool, hint string) (namedQuery, error) {
	return scanNamed(query, allowed, hint, true)
}

// scanNamed splits query around its named parameters, with MySQL's lexical
// rules when mysql is set and else with those of PostgreSQL and SQLite.
func scanNamed(query string, allowed func(string) bool, hint string, mysql bool) (namedQuery, error) {
	var nq namedQuery
	start := 0  // first byte of the part being read
	ended := -1 // offset of the ';' that ended the statement, if any
	n := len(query)
	for i := 0; i < n; {
		c := query[i]
		if ended >= 0 && !isSpace(c) && c != ';' && !startsComment(query, i) && !(mysql && c == '#') {
			return namedQuery{}, fmt.Errorf("a store query must be a single statement: remove what follows the ';' on line %d", lineOf(query, ended))
		}
		switch {
		case c == '\'':
			end, err := skipQuoted(query, i, '\'', mysql || isEscapeString(query, i))
			if err != nil {
				return namedQuery{}, err
			}
			i = end
		case c == '"' || c == '`':
			end, err := skipQuoted(query, i, c, mysql && c == '"')
			if err != nil {
				return namedQuery{}, err
			}
			i = end
		case mysql && (c == '#' || c == '-' && strings.HasPrefix(query[i:], "--") && (i+2 == n || isSpace(query[i+2]))):
			if nl := strings.IndexByte(query[i:], '\n'); nl >= 0 {
				i += nl + 1
			} else {
				i = n
			}
		case mysql && c == '/' && i+1 < n && query[i+1] == '*':
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return namedQuery{}, fmt.Errorf("unterminated /* comment on line %d", lineOf(query, i))
			}
			i += 2 + end + 2
		case mysql && c == '?':
			return namedQuery{}, fmt.Errorf("positional parameter ? on line %d: %s", lineOf(query, i), hint)
		case mysql && c == '-':
			i++ // not a comment: "--1" is minus minus one
		case c == '-' && i+1 < n && query[i+1] == '-':
			if nl := strings.IndexByte(query[i:], '\n'); nl >= 0 {
				i += nl + 1
			} else {
				i = n
			}
		case c == '/' && i+1 < n && query[i+1] == '*':
			end, err := skipBlockComment(query, i)
			if err != nil {
				return namedQuery{}, err
			}
			i = end
		case mysql && c == '$':
			if (i == 0 || !isIdentByte(query[i-1])) && i+1 < n && isDigit(query[i+1]) {
				return namedQuery{}, fmt.Errorf("positional parameter on line %d: %s", lineOf(query, i), hint)
			}
			i++
		case c == '$' && (i == 0 || !isIdentByte(query[i-1])):
			if i+1 < n && isDigit(query[i+1]) {
				return namedQuery{}, fmt.Errorf("positional parameter on line %d: %s", lineOf(query, i), hint)
			}
			end, ok, err := skipDollarQuoted(query, i)
			if err != nil {
				return namedQuery{}, err
			}
			if ok {
				i = end
			} else {
				i++
			}
		case c == ':' && i+1 < n && query[i+1] == ':':
			i += 2 // a PostgreSQL cast, such as :day::date
		case c == ':' && i+1 < n && isIdentStart(query[i+1]):
			j := i + 1
			for j < n && isNameByte(query[j]) {
				j++
			}
			name := query[i+1 : j]
			if !allowed(name) {
				return namedQuery{}, fmt.Errorf("unknown parameter :%s on line %d: %s", name, lineOf(query, i), hint)
			}
			nq.parts = append(nq.parts, query[start:i])
			nq.names = append(nq.names, name)
			start, i = j, j
		case c == ';':
			if ended < 0 {
				ended = i
			}
			i++
		default:
			i++
		}
	}
	nq.parts = append(nq.parts, query[start:])
	return nq, nil
}

// useNamed is the end of every message about a parameter the contract does
// not offer.
const useNamed = "a store query may use the named parameters :day, :from, :to and :tz"

// bind returns the query text with each distinct parameter replaced by a
// numbered placeholder of d ($1 for PostgreSQL, ?1 for SQLite; a parameter
// used twice keeps its number) and the arguments in placeholder order.
func (nq namedQuery) bind(d dsn.Dialect, values map[string]any) (string, []any, error) {
	if nq.err != nil {
		return "", nil, nq.err
	}
	if d == dsn.MySQL {
		return nq.bindMySQL(values)
	}
	var b strings.Builder
	var args []any
	number := map[string]int{}
	for i, name := range nq.names {
		b.WriteString(nq.parts[i])
		k, ok := number[name]
		if !ok {
			v, found := values[name]
			if !found {
				return "", nil, fmt.Errorf("no value for parameter :%s", name)
			}
			args = append(args, v)
			k = len(args)
			number[name] = k
		}
		b.WriteString(placeholder(d, k))
	}
	b.WriteString(nq.parts[len(nq.parts)-1])
	return b.String(), args, nil
}

// bindMySQL returns the query text with each parameter replaced by MySQL's
// only placeholder, ?, and one argument per placeholder: a parameter used
// twice is passed twice.
func (nq namedQuery) bindMySQL(values map[string]any) (string, []any, error) {
	var b strings.Builder
	args := make([]any, 0, len(nq.names))
	for i, name := range nq.names {
		b.WriteString(nq.parts[i])
		v, found := values[name]
		if !found {
			return "", nil, fmt.Errorf("no value for parameter :%s", name)
		}
		args = append(args, v)
		b.WriteByte('?')
	}
	b.WriteString(nq.parts[len(nq.parts)-1])
	return b.String(), args, nil
}

// allowedParam reports whether name is one of the parameters of the custom
// query contract.
func allowedParam(name string) bool {
	switch name {
	case "day", "from", "to", "tz":
		return true
	}
	return false
}

// skipQuoted returns the offset just past the literal or quoted identifier
// that opens at i with quote. A doubled quote stands for itself; with
// backslashes (a PostgreSQL E'...' string) a backslash escapes the next byte.
func skipQuoted(query string, i int, quote byte, backslashes bool) (int, error) {
	for j := i + 1; j < len(query); j++ {
		switch query[j] {
		case '\\':
			if backslashes {
				j++
			}
		case quote:
			if j+1 < len(query) && query[j+1] == quote {
				j++
				continue
			}
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated %c on line %d", quote, lineOf(query, i))
}

// isEscapeString reports whether the quote at i opens a PostgreSQL escape
// string, E'...', in which a backslash escapes a quote.
func isEscapeString(query string, i int) bool {
	if i == 0 || (query[i-1] != 'E' && query[i-1] != 'e') {
		return false
	}
	return i == 1 || !isIdentByte(query[i-2])
}

// skipBlockComment returns the offset just past the /* comment */ that
// opens at i. Comments nest, as in PostgreSQL.
func skipBlockComment(query string, i int) (int, error) {
	depth := 0
	for j := i; j+1 < len(query); {
		switch {
		case query[j] == '/' && query[j+1] == '*':
			depth++
			j += 2
		case query[j] == '*' && query[j+1] == '/':
			depth--
			j += 2
			if depth == 0 {
				return j, nil
			}
		default:
			j++
		}
	}
	return 0, fmt.Errorf("unterminated /* comment on line %d", lineOf(query, i))
}

// skipDollarQuoted returns the offset just past the PostgreSQL dollar-quoted
// string ($$...$$ or $tag$...$tag$) that opens at i; ok is false when the
// '$' at i opens none.
func skipDollarQuoted(query string, i int) (end int, ok bool, err error) {
	j := i + 1
	if j < len(query) && isIdentStart(query[j]) {
		for j < len(query) && isNameByte(query[j]) {
			j++
		}
	}
	if j >= len(query) || query[j] != '$' {
		return 0, false, nil
	}
	tag := query[i : j+1]
	k := strings.Index(query[j+1:], tag)
	if k < 0 {
		return 0, false, fmt.Errorf("unterminated %s string on line %d", tag, lineOf(query, i))
	}
	return j + 1 + k + len(tag), true, nil
}

// startsComment reports whether a comment opens at i.
func startsComment(query string, i int) bool {
	return strings.HasPrefix(query[i:], "--") || strings.HasPrefix(query[i:], "/*")
}

func lineOf(query string, i int) int { return strings.Count(query[:i], "\n") + 1 }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isNameByte(c byte) bool { return isIdentStart(c) || isDigit(c) }

// isIdentByte reports whether c can continue an SQL identifier: besides
// ASCII letters, digits and '_', PostgreSQL allows '$' and any non-ASCII
// letter.
func isIdentByte(c byte) bool { return isNameByte(c) || c == '$' || c >= 0x80 }

// placeholder returns the k-th numbered placeholder of d.
func placeholder(d dsn.Dialect, k int) string {
	if d == dsn.SQLite {
		return "?" + strconv.Itoa(k)
	}
	return "$" + strconv.Itoa(k)
}
