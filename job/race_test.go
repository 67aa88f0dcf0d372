//go:build race

package job

// raceEnabled: under -race the seeded nights run a taste of their seeds.
const raceEnabled = true
