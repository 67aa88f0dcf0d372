//go:build race

package sim

// raceEnabled: under -race the simulation runs a taste of its nights.
const raceEnabled = true
