module github.com/circuitgen/circuitgen/testdata

go 1.26.0

tool (
	github.com/circuitgen/circuitgen/cmd/circuitgen
	github.com/matryer/moq
)

require (
	github.com/circuitgen/circuitgen v0.0.0-00010101000000-000000000000
	google.golang.org/grpc v1.85.0
)

require (
	github.com/circuitgen/circuitgen/cmd/circuitgen v0.0.0-00010101000000-000000000000 // indirect
	github.com/circuitgen/circuitgen/generator v0.0.0-00010101000000-000000000000 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/gofrs/flock v0.13.2 // indirect
	github.com/matryer/moq v0.8.1 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/circuitgen/circuitgen => ..
	github.com/circuitgen/circuitgen/cmd/circuitgen => ../cmd/circuitgen
	github.com/circuitgen/circuitgen/generator => ../generator
)
