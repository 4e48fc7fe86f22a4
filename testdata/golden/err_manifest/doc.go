// Package errmanifest has a broken manifest.
package errmanifest
