// Package clickrecon ships the SQL files of sql/ inside the binary, so
// that the demo can build its store from the reference schemas users
// adopt, and the job's own migrations travel with it.
package clickrecon

import "embed"

// SQL holds every file under sql/.
//
//go:embed sql
var SQL embed.FS
