package console

import (
	"log/slog"
	"testing"
)

// On a terminal, with LOG_LEVEL unset, only warnings and errors are
// logged: the table on stdout says what the info lines would. Anywhere
// else (a pod's JSON log), and whenever LOG_LEVEL is set, it is obeyed.
func TestLogLevel(t *testing.T) {
	for _, tt := range []struct {
		name     string
		level    string
		terminal bool
		want     slog.Level
	}{
		{"terminal_unset_is_warn", "", true, slog.LevelWarn},
		{"pod_unset_is_info", "", false, slog.LevelInfo},
		{"terminal_asked_for_info", "info", true, slog.LevelInfo},
		{"pod_asked_for_debug", "debug", false, slog.LevelDebug},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := logLevel(tt.level, tt.terminal); got != tt.want {
				t.Errorf("logLevel(%q, %v) = %v, want %v", tt.level, tt.terminal, got, tt.want)
			}
		})
	}
}
