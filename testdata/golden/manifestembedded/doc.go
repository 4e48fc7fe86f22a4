// Package manifestembedded guards io.ReadWriteCloser through a manifest
// whose methods entries reach the embedded methods, Close included.
package manifestembedded
