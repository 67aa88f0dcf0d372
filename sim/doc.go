// Package sim is clickrecon's deterministic simulation: job.Run (and
// job.Repair on the nights that repair) in-process over many simulated
// nights on one run history and one click store, with a virtual clock,
// the fake Elido, the fake Slack (webhook or bot token) and the fake
// object store, a world that evolves by a seeded model (traffic, outages,
// duplicates, late data, late receivers, Elido's revisions), a fault at a
// side-effect boundary chosen for each night by the seed, and the
// promises of RELIABILITY.md ("The simulation") checked after every
// night. Everything a night does follows from the seed: a failure prints
// the command that replays it.
//
// The simulation is its tests: go test ./sim (see sim_test.go for the
// flags).
package sim
