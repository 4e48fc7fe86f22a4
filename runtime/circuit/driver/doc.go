// Package driver is the contract between a circuit.Breaker and the store that
// keeps its circuits: what a store implements, as database/sql/driver is for
// database/sql. Applications use runtime/circuit; a store imports this
// package, not the Breaker.
//
// A store keeps one Record per circuit and replaces it atomically: Load
// returns the record, Replace swaps it for another only while the stored one
// is still the same revision (SameRevision), Delete removes it. Every
// decision is made by the Breaker; a store never interprets a record beyond
// Record.Check. A store may implement optional interfaces that the Breaker
// looks for once, in circuit.New: Binder (resolve a circuit once), Clock (a
// clock its processes share), WindowStore and WindowSharer (share the time
// windows of the failure-rate rule), CallWindowStore (share its count
// windows), Notifier (report that its dataset was lost or a server setting
// is unsafe).
//
// Package drivertest is the conformance suite every store must pass;
// docs/design.md explains the record and its rules.
package driver
