package console

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
)

// NewLogger builds the run's logger on stderr (through the progress bar,
// which clears itself before each line). LOG_FORMAT unset: text on a
// terminal, JSON anywhere else (a pod's log collector).
func NewLogger(bar *Bar, format, level string) *slog.Logger {
	terminal := format == "" && bar.Live()
	opts := &slog.HandlerOptions{Level: logLevel(level, terminal)}
	var w io.Writer = bar
	if strings.EqualFold(format, "text") || terminal {
		opts.ReplaceAttr = plainMaps
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// plainMaps writes a map attribute of a text log line as its pairs,
// requests="summary:1 timeseries:1", not in Go's map[…] syntax. (The
// JSON handler writes a map as an object.)
func plainMaps(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindAny {
		return a
	}
	if v := a.Value.Any(); v != nil && reflect.TypeOf(v).Kind() == reflect.Map {
		s := fmt.Sprint(v) // fmt sorts the keys
		a.Value = slog.StringValue(strings.TrimSuffix(strings.TrimPrefix(s, "map["), "]"))
	}
	return a
}

// logLevel is LOG_LEVEL's level. Unset, it is info, but warn on a
// terminal with LOG_FORMAT unset: there the table on stdout says what the
// run's info lines would (its window, what each source read, where the
// report is), and a person reads the table, not six lines before it.
func logLevel(level string, terminal bool) slog.Level {
	if level == "" && terminal {
		return slog.LevelWarn
	}
	l, _ := ParseLevel(level)
	return l
}

// ParseLevel reads LOG_LEVEL; "" is info.
func ParseLevel(s string) (slog.Level, error) {
	if s == "" {
		return slog.LevelInfo, nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("LOG_LEVEL must be debug, info, warn or error, got %q", s)
	}
	return l, nil
}
