// Package usermodule holds the test of what a user's module inherits from
// circuitgen's: the modules importing the runtime and the file store adds
// to its graph, and that it upgrades none of the user's own requirements.
package usermodule
