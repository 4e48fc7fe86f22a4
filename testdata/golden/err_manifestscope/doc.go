// Package errmanifestscope names packages a manifest cannot see.
package errmanifestscope
