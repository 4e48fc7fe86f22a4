module github.com/circuitgen/circuitgen

go 1.26.0

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/gofrs/flock v0.13.2 // indirect
	github.com/sony/gobreaker/v2 v2.4.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
